# SPDX-License-Identifier: BSD-3-Clause
"""The runs under an output root as a fixed-width table (`mpiscope runs`)."""

from __future__ import annotations

from mpiscope.views.text import table


def format_runs(runs) -> str:
    """Fixed-width table of catalog.list_runs()."""
    if not runs:
        return "no runs\n"
    header = ["run_id", "created", "status", "label", "mpi", "np", "benches"]
    right = [False, False, False, False, False, True, False]
    lines = [
        [
            str(r["run_id"]),
            str(r.get("created") or "-"),
            str(r.get("status") or "-"),
            str(r.get("label") or "-"),
            str(r.get("mpi") or "-"),
            "-" if r.get("np") is None else str(r["np"]),
            ",".join(r.get("benches") or []) or "-",
        ]
        for r in runs
    ]
    return table(header, lines, right) + "\n"
