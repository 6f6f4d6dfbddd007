# SPDX-License-Identifier: BSD-3-Clause
"""--format otf2: a traced profile run (`mpiscope profile --trace`) as an
OTF2 archive for Vampir, written into the new directory -o DIR by
profile/otf2_export.py."""

from __future__ import annotations

from mpiscope.common.errors import UsageError
from mpiscope.views.export import Exported, Exporter, without_bench
from mpiscope.views.run_kind import run_kind


def export(run_dir, bench, directory) -> Exported:
    from mpiscope.profile import summary
    from mpiscope.profile.otf2_export import ARCHIVE, write_archive

    without_bench("otf2", bench, "a profile's trace")
    if directory is None:
        raise UsageError("--format otf2 writes an archive directory: give it with -o DIR (a new directory)")
    if run_kind(run_dir) != "profile":
        raise UsageError(
            f"{run_dir} is a measurement, not a profile: OTF2 export is for `mpiscope profile --trace -- …` runs"
        )
    counts = write_archive(run_dir, summary.load(run_dir), directory)
    report = (
        f"mpiscope: wrote {directory / (ARCHIVE + '.otf2')}: {counts['events']} calls, "
        f"{counts['sends']} sends, {counts['recvs']} receives, {counts['collectives']} collectives\n"
    )
    if counts["dropped"]:
        report += (
            f"mpiscope: warning: the trace's buffer was full on ranks {sorted(counts['dropped'], key=int)}: "
            "their later calls are missing (profile again with a larger --trace N)\n"
        )
    return Exported(report, [])


EXPORTER = Exporter(
    name="otf2",
    writes_directory=True,
    export=export,
    help="a traced profile run (mpiscope profile --trace) as an OTF2\n"
    "archive for Vampir, into the new directory -o DIR",
)
