# SPDX-License-Identifier: BSD-3-Clause
"""Open MPI's own view (--library-view): the pml monitoring component's
per-rank output files, what the library really sent after collectives and
one-sided operations became point-to-point messages. Line kinds: E user
point-to-point, I the library's internal (collective) messages, S/R
one-sided puts/gets, C collectives per peer (monitoring/README in Open MPI)."""

from __future__ import annotations

import re
from pathlib import Path

KINDS = {"E": "user", "I": "internal", "S": "osc_sent", "R": "osc_received", "C": "coll"}
_LINE = re.compile(r"^([EISRC])\t(\d+)\t(\d+)\t(\d+) bytes\t(\d+) msgs")


# What mpiscope profile --library-view sets for Open MPI (OMPI_MCA_ + name).
def mca(directory: Path) -> dict:
    return {
        "pml_monitoring_enable": "2",
        "pml_monitoring_enable_output": "3",
        "pml_monitoring_filename": str(Path(directory) / "prof"),
    }


def read(directory: Path):
    """Rows (rank, peer, kind, bytes, msgs) from every prof.<rank>.prof under `directory`."""
    rows = []
    for path in sorted(Path(directory).glob("prof.*.prof")):
        for line in path.read_text(errors="replace").splitlines():
            m = _LINE.match(line)
            if m:
                kind, src, dst, nbytes, msgs = m.groups()
                rows.append((int(src), int(dst), KINDS[kind], int(nbytes), int(msgs)))
    return rows
