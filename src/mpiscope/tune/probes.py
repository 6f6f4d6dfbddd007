# SPDX-License-Identifier: BSD-3-Clause
"""The small MPI programs of native/engine/probe/ the tuner runs, built with the
MPI's own wrapper (make decides what is out of date): mpi_cvars.c lists
the control variables of MPICH and Intel MPI through MPI_T, coll_call.c
makes one collective call per cell (run under gdb for Open MPI and Intel
MPI)."""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.engine.locations import build_root, source_dir
from mpiscope.engine.make import make

# make target -> (the program it builds, what it is called in messages)
PROGRAMS = {"cvars": ("mpi-cvars", "the MPI_T probe"), "collcall": ("mpi-coll-call", "the collective-call probe")}


@functools.cache
def build(mpi, target: str) -> Path:
    """The program of make target `target` (PROGRAMS), built for `mpi`."""
    program, what = PROGRAMS[target]
    out = build_root() / "probes" / hashlib.sha256(mpi.show.encode()).hexdigest()[:16]
    made = make(source_dir("engine"), out, f"MPICC={mpi.wrapper}", target)
    if made.returncode != 0:
        raise UsageError(f"cannot build {what} with {mpi.wrapper}:\n{made.stderr[-1500:]}")
    return out / program
