# SPDX-License-Identifier: BSD-3-Clause
"""Imported logs stored as runs of kind `imported`: OUT/<run_id>/ holding
context.json (what the log and the options say of the run), quality.json
(each value as the series' median, without an interval: the tool printed a
summary, not its repetitions) and imported.json (every value with the
columns the tool printed beside it, and its line in the file).

Every run is written into a hidden OUT/.<run_id>.importing directory first
and renamed once all of them are whole: a failure leaves nothing imported."""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
import sys
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from mpiscope.common.atomic import write_text
from mpiscope.common.errors import UsageError
from mpiscope.common.jsonable import plain
from mpiscope.store.layout import CONTEXT_FILE, SCHEMA_VERSION

IMPORTED_FILE = "imported.json"
FORMAT = "mpiscope-imported"
FORMAT_VERSION = 1


@dataclass(frozen=True)
class Given:
    """What the options say where the log does not."""

    machine: str | None = None
    mpi: str | None = None
    mpi_version: str | None = None
    np: int | None = None
    nodes: int | None = None
    label: str | None = None


def context_of(log, digest, given: Given, run_id, argv) -> dict:
    identity = {k: v for k, v in (("implementation", given.mpi), ("version", given.mpi_version)) if v}
    machine = {"host": given.machine or log.machine or "unknown"}
    if log.facts.get("kernel"):
        machine["kernel"] = log.facts["kernel"]
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "kind": "imported",
        "label": given.label,
        "created": log.when.isoformat(timespec="seconds"),
        "status": "completed",
        "error": None,
        "command": list(argv),
        "mpi": given.mpi,
        **({"mpi_identity": identity} if identity else {}),
        "np": log.np or given.np,
        "nodes": log.nodes or given.nodes,
        "benches": list(dict.fromkeys(v.bench for v in log.values)),
        "machine": machine,
        "imported": {
            "tool": log.tool,
            "version": log.version,
            "source": os.path.abspath(log.path),
            "source_sha256": digest,
            "part": log.part,
            "date_from": log.date_from,
            "method": ", ".join(filter(None, [f"imported {log.tool}", log.method])),
            "facts": dict(log.facts),
        },
    }


def new_run_id(when: datetime) -> str:
    return when.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def verdicts_of(log):
    from mpiscope.stats.quality import Verdict

    return [
        Verdict(
            v.bench,
            v.algo,
            v.size,
            v.unit,
            v.reps or 1,
            0,
            "imported",
            None,
            math.nan,
            median=v.value,
            ci_low=v.value,
            ci_high=v.value,
        )
        for v in log.values
    ]


def imported_doc(log) -> dict:
    return {
        "format": FORMAT,
        "schema_version": FORMAT_VERSION,
        "tool": log.tool,
        "version": log.version,
        "source": os.path.abspath(log.path),
        "part": log.part,
        "notes": list(log.notes),
        "values": [v.to_dict() for v in log.values],
    }


def read_imported(run_dir) -> dict:
    """RUN/imported.json, checked; UsageError naming the file when it is not
    what store() wrote (cut, overwritten, another version)."""
    from mpiscope.common.inputs import read_json

    path = Path(run_dir) / IMPORTED_FILE
    hint = "restore it from a copy, or `mpiscope runs rm` the run and import its log again"
    doc = read_json(path, hint=hint)
    if not (
        isinstance(doc, dict)
        and doc.get("format") == FORMAT
        and doc.get("schema_version") == FORMAT_VERSION
        and isinstance(doc.get("values"), list)
        and all(_value_ok(v) for v in doc["values"])
    ):
        raise UsageError(
            f"{path} is damaged or of another version (this mpiscope reads {FORMAT} version {FORMAT_VERSION}): {hint}"
        )
    return doc


def _value_ok(v) -> bool:
    def number(x, none_ok=True):
        return (x is None and none_ok) or (isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x))

    return (
        isinstance(v, dict)
        and isinstance(v.get("bench"), str)
        and isinstance(v.get("algo"), str)
        and isinstance(v.get("size"), int)
        and v.get("unit") in ("s", "B/s")
        and number(v.get("value"), False)
        and isinstance(v.get("line"), int)
        and number(v.get("min"))
        and number(v.get("max"))
        and (v.get("reps") is None or isinstance(v.get("reps"), int))
    )


def already_imported(out, wanted) -> dict:
    """{(sha256, part): run id} of the runs under `out` imported from these files."""
    from mpiscope.store import catalog

    found = {}
    for run in catalog.list_runs(out, with_context=True):
        imported = (run["context"] or {}).get("imported") or {}
        key = (imported.get("source_sha256"), imported.get("part"))
        if key in wanted:
            found[key] = run["run_id"]
    return found


def store(out, logs_with_digests, given: Given, argv) -> list[tuple]:
    """Writes every (log, digest) as a run; returns [(log, run directory, context)]."""
    from mpiscope.stats import quality
    from mpiscope.store import catalog

    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"--out {out}: cannot create it ({exc.strerror or exc}); give a directory you can write to"
        ) from None
    written = []  # (log, temporary directory, final directory, context)
    try:
        for log, digest in logs_with_digests:
            run_id = new_run_id(log.when)
            tmp = out / f".{run_id}.importing"
            tmp.mkdir()
            context = context_of(log, digest, given, run_id, argv)
            written.append((log, tmp, out / run_id, context))
            quality.save(tmp, verdicts_of(log))
            write_text(tmp / IMPORTED_FILE, json.dumps(plain(imported_doc(log)), indent=1) + "\n")
            write_text(tmp / CONTEXT_FILE, json.dumps(context, indent=2) + "\n")
    except OSError as exc:
        for _, tmp, _, _ in written:
            shutil.rmtree(tmp, ignore_errors=True)
        raise UsageError(
            f"--out {out}: cannot write the imported runs there ({exc.strerror or exc}); nothing was imported"
        ) from None
    for _, tmp, final, _ in written:
        os.rename(tmp, final)
    try:  # one refresh for all of them: a perflog of years is thousands of runs
        catalog.refresh(out)
    except Exception as exc:  # noqa: BLE001 - the runs are stored; the index can wait
        sys.stderr.write(
            f"mpiscope: warning: the catalog was not updated ({exc}); the next `mpiscope runs` adds the runs\n"
        )
    return [(log, final, context) for log, _, final, context in written]
