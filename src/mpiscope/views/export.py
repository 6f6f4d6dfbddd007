# SPDX-License-Identifier: BSD-3-Clause
"""Export a run as CSV (every valid sample), JSON (summaries + context), or
one benchmark as text the matching OSU Micro-Benchmarks program would print
(views/osu.py)."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import NamedTuple

from mpiscope.common.errors import UsageError
from mpiscope.views import EXPORT_FORMATS
from mpiscope.common.documents import json_document
from mpiscope.store.ingest import SAMPLES_FILE, load
from mpiscope.views.show import quality_summary, show_rows
from mpiscope.store.run import Run
from mpiscope.store.series import all_series_samples, open_run


class Exported(NamedTuple):
    text: str
    notes: list  # what was left out and why (the CLI prints them on stderr)


def _csv(run_dir):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["bench", "algo", "size", "launch", "rep", "source", "value", "unit"])
    if not (Path(run_dir) / SAMPLES_FILE).exists():
        return buf.getvalue()
    table, run = load(run_dir)
    for bench, algo, size, s in all_series_samples(table, run):
        u = s.unit
        for launch, rep, src, value in zip(s.launch.tolist(), s.rep.tolist(),
                                           s.source.tolist(), s.values.tolist()):
            w.writerow([bench, algo, size, launch, rep, src, repr(value), u])
    return buf.getvalue()


def show_json(rows, run: Run) -> str:
    """`show`'s rows (each with its quality verdict), the quality summary and
    the run context as JSON (show --json, export json, run --json)."""
    return json_document("show", {"run_id": run.run_id,
                                  "run_dir": None if run.path is None else str(run.path),
                                  "context": run.context, "quality": quality_summary(rows, run),
                                  "rows": rows})


def _json(run_dir):
    return show_json(show_rows(run_dir), open_run(run_dir))


def _osu(run_dir, bench):
    from mpiscope.views.osu import osu_text

    if not (Path(run_dir) / SAMPLES_FILE).exists():
        raise UsageError(f"{run_dir} holds no samples (the run stored none): nothing to export")
    table, run = load(run_dir)
    return osu_text(table, run, bench)


def export(run_dir, fmt: str, bench: str | None = None) -> Exported:
    """The run at `run_dir` in format `fmt` ("csv", "json" or "osu").

    csv: one line per valid sample (bench, algo, size, launch, rep, source,
    value, unit; values in s or B/s, full precision). json: the `show` rows
    and the run context. osu: benchmark `bench` as its OSU 7.4 program prints
    it (views/osu.py); only osu takes `bench`.
    """
    if fmt not in EXPORT_FORMATS:
        raise UsageError(f"unknown export format '{fmt}': choose one of {', '.join(EXPORT_FORMATS)}")
    if fmt == "osu":
        return Exported(*_osu(run_dir, bench))
    if bench is not None:
        raise UsageError(f"--bench selects the benchmark of --format osu; --format {fmt} exports "
                         "every benchmark")
    return Exported(_csv(run_dir) if fmt == "csv" else _json(run_dir), [])
