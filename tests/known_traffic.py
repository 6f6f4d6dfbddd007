# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: native/pmpi/tests/known_traffic.c, the program whose traffic is
known exactly, built with the profiler and profiled by `mpiscope profile`."""

import json

from mpiscope.engine.mpi import find_mpi
from mpiscope.profile.build import ensure_library
from runcli import mpiscope

NP = 4


def program_path(mpi):
    return ensure_library(find_mpi(mpi=mpi), "tests") / "known-traffic"


def launch(mpi, program, np_=NP):
    if mpi == "openmpi":
        return ["mpirun.openmpi", "-n", str(np_), "--oversubscribe", "--bind-to", "none",
                "--mca", "mpi_yield_when_idle", "1", str(program)]
    return ["mpiexec.mpich", "-n", str(np_), str(program)]


def profile_ok(out, mpi, *flags, env=None):
    p = mpiscope("profile", "--out", out, "--mpi", mpi, "--json", *flags, "--", *launch(mpi, program_path(mpi)),
                 env=env, timeout=300)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout}\n{p.stderr}"
    doc = json.loads(p.stdout)
    return out / doc["run_id"], doc


COLLECTIVES = {  # call: [(communicator size, bytes)] per rank
    "MPI_Barrier": [(NP, 0)] * 2, "MPI_Bcast": [(NP, 1 << 20), ("node", 100)],
    "MPI_Allreduce": [(NP, 64)] * 3 + [(NP // 2, 8192)] * 2, "MPI_Alltoall": [(NP, 32)],
    "MPI_Allgather": [(NP, 256)], "MPI_Reduce": [(NP, 4)], "MPI_Gather": [(NP, 16)],
    "MPI_Scatter": [(NP, 16)], "MPI_Iallreduce": [(NP, 16)], "MPI_Ibarrier": [(NP, 0)],
}
