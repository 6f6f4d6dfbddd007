# SPDX-License-Identifier: BSD-3-Clause
"""--format osu: one benchmark (--bench) as the matching OSU Micro-Benchmarks
program prints it (views/osu.py); what OSU would not print is left out with a note."""

from __future__ import annotations

from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.views.export import Exported, Exporter
from mpiscope.views.run_kind import measured_run


def export(run_dir, bench, directory) -> Exported:
    from mpiscope.store.ingest import SAMPLES_FILE, load
    from mpiscope.views.osu import osu_text

    measured_run(run_dir)
    if not (Path(run_dir) / SAMPLES_FILE).exists():
        raise UsageError(f"{run_dir} holds no samples (the run stored none): nothing to export")
    table, run = load(run_dir)
    return Exported(*osu_text(table, run, bench))


EXPORTER = Exporter(
    name="osu",
    writes_directory=False,
    export=export,
    help="one benchmark (--bench) as the matching OSU Micro-Benchmarks 7.4\n"
    "program prints it (means, as OSU reports, not medians); what OSU\n"
    "would not print is left out with a note on stderr",
)
