# SPDX-License-Identifier: BSD-3-Clause
"""--check verifies every collective's result, on Open MPI and MPICH."""

import pytest

from runcli import mpiscope, run_ok

COLLECTIVES = "barrier,bcast,reduce,allreduce,allgather,gather,scatter,alltoall,reduce_scatter_block"


@pytest.mark.parametrize("np_", [2, 3, 4, 5])
def test_check_passes_for_every_collective_open_mpi(tmp_path, np_):
    _, summary = run_ok("-n", np_, "--bench", COLLECTIVES, "--sizes", "1,7,4K,64K", "--check",
                        "--root-rotate", "--reps-min", 5, "--reps-max", 20, out=tmp_path)
    assert summary["context"]["status"] == "completed"
    benches = {r["bench"] for r in summary["rows"]}
    assert benches == set(COLLECTIVES.split(","))


def test_check_passes_for_every_collective_mpich(tmp_path):
    _, summary = run_ok("-n", 2, "--mpi", "mpich", "--bench", COLLECTIVES, "--sizes", "1,7,4K,64K",
                        "--check", "--reps-min", 5, "--reps-max", 20, out=tmp_path)
    assert summary["context"]["status"] == "completed"
    assert "MPICH" in _library(summary["run_dir"])


def _library(run):
    from mpiscope.store import ingest as store
    return store.load(run)[1].mpi_library


@pytest.mark.parametrize("bench", ["allreduce", "alltoall", "pingpong"])
def test_check_catches_corrupted_data(tmp_path, bench):
    p = mpiscope("run", "-n", 2, "--bench", bench, "--sizes", 64, "--check", "--reps-max", 10,
                 out=tmp_path, env={"MPISCOPE_TEST_CORRUPT": "1"})
    assert p.returncode == 1
    assert "--check failed" in p.stderr and bench in p.stderr
