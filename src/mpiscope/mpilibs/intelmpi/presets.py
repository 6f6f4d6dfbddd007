# SPDX-License-Identifier: BSD-3-Clause
"""Which algorithm presets Intel MPI offers per collective, read from the
library itself: its control variables through MPI_T (native/engine/probe/mpi_cvars.c,
built with its own wrapper), each I_MPI_ADJUST_<OP> described with the range
of its preset identifiers ("range: 0-32"); the range differs between
versions. Preset 0 is the library's generic selection logic (MPICH's), not
its tuned default, so it is no candidate: presets 1..N are.

A preset is named `preset<k>`: Intel MPI gives its presets no names, and
several run the same code on a given machine and communicator size (which
functions each enters is read under gdb, calls.py)."""

from __future__ import annotations

import re
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.algorithm_catalog import COLLECTIVES, Algorithm, Catalog
from mpiscope.mpilibs.mpich.cvars import read_cvars

ALIAS_RE = re.compile(r"@Alias:#\s*(I_MPI_ADJUST_\w+)")
RANGE_RE = re.compile(r"range:\s*(\d+)\s*-\s*(\d+)")


def variable(coll: str) -> str:
    """The variable that selects `coll`'s presets."""
    return f"I_MPI_ADJUST_{coll.upper()}"


def preset_name(k: int) -> str:
    return f"preset{k}"


def ranges(cvars: dict) -> dict:
    """{collective: highest preset} from MPI_T's {name: (description, enum)}."""
    out = {}
    for desc, _ in cvars.values():
        alias, span = ALIAS_RE.search(desc), RANGE_RE.search(desc)
        if alias is None or span is None:
            continue
        for coll in COLLECTIVES:
            if alias.group(1) == variable(coll):
                out[coll] = int(span.group(2))
    return out


def catalog(mpi, probe: Path) -> Catalog:
    """`probe`: native/engine/probe/mpi_cvars.c built with the MPI's wrapper."""
    cvars = read_cvars(probe)
    if cvars is None:
        raise UsageError(f"the MPI_T probe built with {mpi.wrapper} does not start")
    highest = ranges(cvars)
    if not highest:
        raise UsageError(f"{mpi.name} describes no I_MPI_ADJUST_<OP> preset range through MPI_T")
    algorithms = {
        c: [Algorithm(preset_name(k), str(k)) for k in range(1, highest[c] + 1)]
        for c in COLLECTIVES
        if highest.get(c, 0) >= 1
    }
    return Catalog("intelmpi", mpi.version, algorithms, "MPI_T control variables (the I_MPI_ADJUST_<OP> preset ranges)")
