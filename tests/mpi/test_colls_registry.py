# SPDX-License-Identifier: BSD-3-Clause
"""Every algorithm of native/engine/colls against the MPI library's own collective.

One C program (native/engine/tests/colls_check.c, built by `make tests`) loops
over the whole registry: every algorithm, counts 0, 1, 7, 1000 and 100003,
traced and untraced, compared byte for byte with MPI's result (integer sums
for the reductions). It runs once per number of ranks, oversubscribed where
there are more ranks than cores. Then the engine runs every algorithm with
--check, and the registry is compared with the cost models' list.
"""

import shutil
import subprocess

import pytest

from mpiscope.engine import build

from mpiscope.measure import launch
from mpiscope.models.costmodels import ALGORITHMS
from runcli import mpiscope, run_ok

KIND_TO_BENCH = {"allgather": "allgather", "allreduce": "allreduce",
                 "reduce_scatter": "reduce_scatter_block", "bcast": "bcast", "alltoall": "alltoall"}


def _checker(mpi):
    if shutil.which(f"mpicc.{mpi}") is None:
        pytest.skip(f"mpicc.{mpi} is not installed")
    return build.make(mpi, "tests") / "colls-check"


def _run_checker(mpi, np_, args=(), env=None):
    cmd = launch.command(launcher_family=mpi, launcher="mpirun", np=np_, engine=_checker(mpi), engine_args=list(args),
                         oversubscribe=np_ > launch.local_cpus())
    full_env = launch.launch_env(mpi)
    if env:
        full_env.update(env)
        if mpi == "openmpi":
            cmd[1:1] = [x for k in env for x in ("-x", k)]
    return subprocess.run(cmd, capture_output=True, text=True, env=full_env, timeout=300)


def _ok_lines(out):
    """{(bench, algorithm)} reported ok."""
    found = set()
    for line in out.splitlines():
        parts = line.split()
        if parts and parts[0] == "ok":
            found.add((KIND_TO_BENCH[parts[1]], parts[2]))
    return found


REGISTRY = {(bench, name) for bench, names in ALGORITHMS.items() for name in names}


@pytest.mark.parametrize("np_", [1, 2, 3, 4, 5, 7, 8])
def test_every_algorithm_gives_mpis_result(np_):
    p = _run_checker("openmpi", np_)
    assert p.returncode == 0, f"stdout:\n{p.stdout}\nstderr:\n{p.stderr[-3000:]}"
    assert "FAIL" not in p.stdout + p.stderr
    # the C registry is exactly the list the cost models (and --algo validation) know
    assert _ok_lines(p.stdout) == REGISTRY
    assert all(f"p={np_} counts=5" in line for line in p.stdout.splitlines() if line.startswith("ok"))


def test_every_algorithm_gives_mpis_result_mpich():
    p = _run_checker("mpich", 2, ["0", "1", "7", "1000"])
    assert p.returncode == 0, f"stdout:\n{p.stdout}\nstderr:\n{p.stderr[-3000:]}"
    assert _ok_lines(p.stdout) == REGISTRY


def test_the_check_notices_a_wrong_result():
    p = _run_checker("openmpi", 2, ["7"], env={"MPISCOPE_TEST_CORRUPT": "1"})
    assert p.returncode != 0
    assert "FAIL allgather ring p=2 count=7" in p.stderr


def test_engine_runs_every_algorithm_with_check(tmp_path):
    # barrier starts: a window start may come late on a busy machine, and with
    # three repetitions a series could then keep no valid sample
    run, summary = run_ok("-n", 3, "--bench", "allgather,allreduce,reduce_scatter_block,bcast,alltoall",
                          "--algo", "all", "--sizes", "1,1000", "--check", "--root-rotate",
                          "--reps-min", 3, "--reps-max", 3, "--warmup", 1, "--sync", "barrier",
                          out=tmp_path)
    assert summary["context"]["status"] == "completed"
    measured = {(r["bench"], r["algo"]) for r in summary["rows"]}
    assert measured == REGISTRY | {(b, "mpi") for b in ALGORITHMS}
    assert all(r["n"] >= 1 for r in summary["rows"])


def test_engine_check_catches_a_wrong_result_of_our_algorithm(tmp_path):
    p = mpiscope("run", "-n", 2, "--bench", "allreduce", "--algo", "ring", "--sizes", 64, "--check",
                 "--reps-min", 2, "--reps-max", 4, "--warmup", 0, out=tmp_path, env={"MPISCOPE_TEST_CORRUPT": "1"})
    assert p.returncode == 1
    assert "--check failed" in p.stderr and "allreduce" in p.stderr
