"""Builds the C engine for one MPI library (make decides what is out of date)."""

import functools
import shutil
import subprocess
from pathlib import Path

from mpiscope.common.errors import UsageError

REPO = Path(__file__).resolve().parents[3]
ENGINE_SRC = REPO / "engine"
APT_PACKAGES = {"openmpi": "openmpi-bin libopenmpi-dev", "mpich": "mpich libmpich-dev"}


def engine_path(mpi):
    return REPO / "build" / mpi / "mpiscope-engine"


@functools.cache  # once per process: planning and launching both need it
def ensure_engine(mpi):
    """Returns the engine binary for `mpi`, (re)building it when sources changed."""
    if shutil.which(f"mpicc.{mpi}") is None:
        raise UsageError(f"the {mpi} compiler wrapper mpicc.{mpi} is not installed; "
                         f"run 'make setup' or apt-get install {APT_PACKAGES[mpi]}")
    result = subprocess.run(["make", "-s", "-C", str(ENGINE_SRC), f"MPI={mpi}",
                             f"BUILD={REPO / 'build' / mpi}"], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"building the engine for {mpi} failed:\n{result.stderr[-3000:]}")
    return engine_path(mpi)
