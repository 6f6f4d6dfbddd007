# SPDX-License-Identifier: BSD-3-Clause
"""Builds the C engine for one MPI (make decides what is out of date).

Each MPI gets its own build directory, <build root>/engines/<key>/, the key
naming the MPI and hashing its compile line and library (engine/mpi.py); the
build root is the checkout's build/ or the user's cache (locations.py).
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path

from mpiscope.common.errors import BuildFailed
from mpiscope.engine.locations import REPO, build_root, source_dir  # noqa: F401 (REPO: tests, bench/)
from mpiscope.engine.make import make as run_make
from mpiscope.engine.mpi import Installation, find_mpi

ENGINE_SRC = source_dir("engine")
ENGINE_NAME = "mpiscope-engine"


def as_installation(mpi) -> Installation:
    """An Installation, from one or from a library key with a Debian wrapper (--mpi openmpi | mpich)."""
    return mpi if isinstance(mpi, Installation) else find_mpi(mpi=mpi)


def build_dir(mpi) -> Path:
    return build_root() / "engines" / as_installation(mpi).key


def engine_path(mpi) -> Path:
    return build_dir(mpi) / ENGINE_NAME


def make(mpi, *targets) -> Path:
    """Runs make on the engine's sources for `mpi` (the engine by default, or
    `targets`); returns the build directory."""
    mpi = as_installation(mpi)
    out = build_dir(mpi)
    result = run_make(ENGINE_SRC, out, f"MPICC={mpi.wrapper}", *targets)
    if result.returncode != 0:
        raise BuildFailed(f"building the engine with {mpi.wrapper} ({mpi.name}) failed:\n{result.stderr[-3000:]}")
    return out


@functools.cache  # once per process: planning and launching both need it
def ensure_engine(mpi) -> Path:
    """Returns the engine binary for `mpi`, (re)building it when sources changed;
    the first build for an MPI says so on stderr (it takes a while)."""
    mpi = as_installation(mpi)
    binary = engine_path(mpi)
    first = not binary.exists()
    if first:
        sys.stderr.write(
            f"mpiscope: building the engine for {mpi.name} ({mpi.wrapper}) into "
            f"{binary.parent}; once per MPI, this takes some seconds\n"
        )
        sys.stderr.flush()
    started = time.monotonic()
    make(mpi)
    if first:
        sys.stderr.write(f"mpiscope: engine built in {time.monotonic() - started:.0f} s\n")
    return binary
