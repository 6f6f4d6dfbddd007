# SPDX-License-Identifier: BSD-3-Clause
"""An app run in the store: OUT/<run_id>/ of kind "app", in the catalog beside
measurements and profiles. It holds context.json (kind "app", the command, the
configurations, the options, the MPI, the status), launches.parquet (one row a
launch, warm-up included, rewritten after every launch: app/launch.py Launch),
launch-<k>.out and launch-<k>.stderr, the hostfile when given, and app.json
(the answer, the stop and the prediction: app/answer.py).

It is built under the hidden name .<run_id>.partial, its context "failed", and
renamed when stored: a killed run stays hidden and failed, with the launches it
measured readable (`mpiscope show .<run_id>.partial`)."""

from __future__ import annotations

import dataclasses
import json
import os
import socket
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from mpiscope.app import checks
from mpiscope.app.answer import summarize
from mpiscope.common.atomic import atomic_path, write_text
from mpiscope.common.errors import UsageError
from mpiscope.store import catalog, checks as run_checks
from mpiscope.store.layout import CONTEXT_FILE, SCHEMA_VERSION
from mpiscope.common.inputs import InputError, read_json, read_parquet

KIND = "app"
LAUNCHES_FILE = "launches.parquet"
ANSWER_FILE = "app.json"
UNFINISHED = (
    "mpiscope stopped before it stored the run (killed, or the disk was full); "
    f"{LAUNCHES_FILE} holds the launches measured until then"
)
SCHEMA = pa.schema(
    [
        ("index", pa.int32()),
        ("config", pa.string()),
        ("round", pa.int32()),
        ("warmup", pa.bool_()),
        ("started", pa.string()),
        ("wall_s", pa.float64()),
        ("exit_code", pa.int32()),
        ("metric", pa.float64()),
        ("status", pa.string()),
        ("reason", pa.string()),
        ("stderr_tail", pa.string()),
    ]
)


def _write_json(path: Path, doc: dict) -> None:
    write_text(path, json.dumps(doc, indent=2, default=str) + "\n")


class Writer:
    """An app run's directory while it is measured."""

    def __init__(self, out: Path, context: dict):
        self.out, self.context = Path(out), context
        self.out.mkdir(parents=True, exist_ok=True)
        self.dir = self.out / f".{context['run_id']}.partial"
        self.dir.mkdir()
        self.launches = []
        context.update(
            {
                "schema_version": SCHEMA_VERSION,
                "kind": KIND,
                "status": "failed",
                "error": UNFINISHED,
                "writer": {"host": socket.gethostname(), "pid": os.getpid()},
            }
        )
        self._write_launches()
        _write_json(self.dir / CONTEXT_FILE, context)

    def add(self, launch) -> None:
        """One more launch, stored at once."""
        self.launches.append(dataclasses.asdict(launch))
        self._write_launches()

    def _write_launches(self) -> None:
        with atomic_path(self.dir / LAUNCHES_FILE) as tmp:
            pq.write_table(pa.Table.from_pylist(self.launches, schema=SCHEMA), tmp)

    def finish(self, answer: dict, **context) -> Path:
        """app.json and the final context; the directory gets its run id as
        name and the catalog learns of it. Returns the run directory."""
        self.context.update(context)
        self.context.pop("writer", None)
        self._write_launches()  # whole, even when an interruption cut the last write short
        _write_json(self.dir / ANSWER_FILE, {"schema_version": SCHEMA_VERSION, **answer})
        _write_json(self.dir / CONTEXT_FILE, self.context)
        final = self.out / self.context["run_id"]
        os.rename(self.dir, final)
        self.dir = final
        catalog.record(self.out, final, self.context)
        return final


@dataclass(frozen=True)
class AppRun:
    path: Path
    context: dict
    launches: list  # dicts, as launches.parquet holds them, in launch order
    answer: dict  # app.json; recomputed from the launches when it is missing

    @property
    def with_metric(self) -> bool:
        return bool((self.context.get("value") or {}).get("metric"))


def load(run_dir) -> AppRun:
    run_dir = Path(run_dir)
    fix = "restore it from a copy, or `mpiscope runs rm` the run"
    context = read_json(run_dir / CONTEXT_FILE, hint=fix)
    checks.context(run_checks.context(context, run_dir / CONTEXT_FILE), run_dir / CONTEXT_FILE)
    path = run_dir / LAUNCHES_FILE
    try:
        table = read_parquet(path, missing_ok=True)
    except InputError as exc:  # cut short, or overwritten
        raise UsageError(
            f"{path} is damaged: it is not a readable Parquet file ({exc.problem}); an "
            f"app run has no raw files to store it again from: {fix}"
        ) from None
    launches = table.to_pylist() if table is not None else []
    try:
        answer = checks.answer(read_json(run_dir / ANSWER_FILE), run_dir / ANSWER_FILE)
    except InputError:  # stopped before the end: the answer from what was measured
        names = [c["name"] for c in context.get("configs") or ()]
        answer = {
            **summarize(
                launches,
                names,
                context["baseline"],
                context["options"],
                bool((context.get("value") or {}).get("metric")),
            ),
            "stop": None,
            "prediction": None,
        }
    return AppRun(run_dir, context, launches, answer)
