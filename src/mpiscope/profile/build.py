# SPDX-License-Identifier: BSD-3-Clause
"""Builds the interposition library (native/pmpi/) for one MPI, beside the engine's
build for it: <build root>/pmpi/<MPI key>/ (the key as engine/mpi.py names it)."""

from __future__ import annotations

import sys
from pathlib import Path

from mpiscope.common.errors import BuildFailed
from mpiscope.engine.build import as_installation
from mpiscope.engine.locations import build_root, source_dir
from mpiscope.engine.make import make as run_make

PMPI_SRC = source_dir("pmpi")
LIBRARY = "libmpiscope-pmpi.so"


def pmpi_dir(mpi) -> Path:
    return build_root() / "pmpi" / as_installation(mpi).key


def ensure_library(mpi, *targets) -> Path:
    """The build directory holding libmpiscope-pmpi.so for `mpi` (and `targets`,
    e.g. "tests"), rebuilt by make when the sources changed."""
    mpi = as_installation(mpi)
    out = pmpi_dir(mpi)
    if not (out / LIBRARY).exists():
        sys.stderr.write(f"mpiscope: building the profiler library for {mpi.name} into {out}\n")
    made = run_make(PMPI_SRC, out, f"MPICC={mpi.wrapper}", str(out / LIBRARY), *targets)
    if made.returncode != 0:
        raise BuildFailed(
            f"building the profiler library with {mpi.wrapper} ({mpi.name}) failed:\n{made.stderr[-3000:]}"
        )
    return out
