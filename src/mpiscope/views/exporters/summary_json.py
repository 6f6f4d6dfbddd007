# SPDX-License-Identifier: BSD-3-Clause
"""--format json: the summary rows of `show` and the run context, the
document of `show --json`."""

from __future__ import annotations

from mpiscope.views.export import Exported, Exporter, without_bench
from mpiscope.views.run_kind import measured_run


def export(run_dir, bench, directory) -> Exported:
    from mpiscope.store.series import open_run
    from mpiscope.views.show import show_json, show_rows

    measured_run(run_dir)
    without_bench("json", bench, "every benchmark")
    return Exported(show_json(show_rows(run_dir), open_run(run_dir)), [])


EXPORTER = Exporter(
    name="json", writes_directory=False, export=export, help="the summary rows of `show` and the run context"
)
