# SPDX-License-Identifier: BSD-3-Clause
"""--format csv: one line per valid sample (bench, algo, size, launch, rep,
source, value, unit; values in s or B/s, full precision)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from mpiscope.views.export import Exported, Exporter, without_bench
from mpiscope.views.run_kind import measured_run


def _csv(run_dir) -> str:
    from mpiscope.store.ingest import SAMPLES_FILE, load
    from mpiscope.store.series import all_series_samples

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["bench", "algo", "size", "launch", "rep", "source", "value", "unit"])
    if not (Path(run_dir) / SAMPLES_FILE).exists():
        return buf.getvalue()
    table, run = load(run_dir)
    for bench, algo, size, s in all_series_samples(table, run):
        u = s.unit
        for launch, rep, src, value in zip(s.launch.tolist(), s.rep.tolist(), s.source.tolist(), s.values.tolist()):
            w.writerow([bench, algo, size, launch, rep, src, repr(value), u])
    return buf.getvalue()


def export(run_dir, bench, directory) -> Exported:
    measured_run(run_dir)
    without_bench("csv", bench, "every benchmark")
    return Exported(_csv(run_dir), [])


EXPORTER = Exporter(
    name="csv",
    writes_directory=False,
    export=export,
    help="one line per valid sample (seconds, or bytes/s for bw/bibw)",
)
