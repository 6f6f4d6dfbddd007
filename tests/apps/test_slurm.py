# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope run --launcher srun` and `mpiscope sbatch` on a real Slurm: a
one-machine cluster of two nodes (tests/slurm_cluster.py), started once for
this module and stopped afterwards, also when a test fails. Tiny runs:
2 ranks, one size, few repetitions."""

import json
import re
import sys
from pathlib import Path

import pytest

from mpiscope.store import ingest as store

from slurm_cluster import SlurmCluster

SMALL = ["--bench", "pingpong", "--sizes", "8", "--reps-max", "30", "--time-budget", "0.5"]


@pytest.fixture(scope="module")
def slurm():
    cluster = SlurmCluster()
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()


def mpiscope_words(*args):
    return [sys.executable, "-m", "mpiscope.cli", *map(str, args)]


def in_allocation(slurm, *run_args):
    """`salloc -N 2 --ntasks-per-node=1 mpiscope run ...`; returns (process, job id)."""
    p = slurm.run(["salloc", "-N", "2", "--ntasks-per-node=1", "--time=5",
                   *mpiscope_words("run", *run_args)])
    job = re.search(r"Granted job allocation (\d+)", p.stderr)
    return p, job and job.group(1)


def _context(p):
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    run = Path(json.loads(p.stdout)["run_dir"])
    return run, store.load(run)[1].context


@pytest.mark.parametrize("mpi, plugin", [("openmpi", "pmix"), ("mpich", "pmi2")])
def test_srun_runs_one_rank_on_each_node(slurm, tmp_path, mpi, plugin):
    p, job = in_allocation(slurm, "--launcher", "srun", "-N", 2, "--ppn", 1, "--mpi", mpi, *SMALL,
                           "--json", "--out", tmp_path)
    run, ctx = _context(p)
    assert ctx["status"] == "completed" and ctx["launcher"] == "srun" and ctx["np"] == 2
    (cmd,) = ctx["launch_commands"]
    assert cmd[0] == "srun" and f"--mpi={plugin}" in cmd
    assert "--nodes=2" in cmd and "--ntasks-per-node=1" in cmd
    (series,) = [s for s in ctx["series"] if s["bench"] == "pingpong"]
    assert series["reps"] > 0
    # Slurm's own record: both nodes' slurmd started a task of this job.
    assert slurm.step_nodes(job) == ["n1", "n2"]


def test_open_mpi_hostfile_is_converted_for_srun(slurm, tmp_path):
    # Open MPI syntax, n2 first: srun gets one line per rank in this order.
    hosts = tmp_path / "hosts"
    hosts.write_text("n2 slots=1\nn1 slots=1   # the second rank\n")
    p, job = in_allocation(slurm, "--launcher", "srun", "--hostfile", hosts, *SMALL, "--json",
                           "--out", tmp_path / "runs")
    run, ctx = _context(p)
    assert ctx["np"] == 2 and ctx["status"] == "completed"
    assert (run / "hostfile").read_text() == "n2\nn1\n"
    assert "--distribution=arbitrary" in ctx["launch_commands"][0]
    assert slurm.step_nodes(job) == ["n1", "n2"]


def test_failed_srun_shows_its_whole_message(slurm, tmp_path):
    p, _ = in_allocation(slurm, "--launcher", "srun", "-N", 2, "--launcher-args", "--no-such-option",
                         *SMALL, "--out", tmp_path)
    assert p.returncode == 1
    # srun's complaint and its hint, both lines of it
    assert "unrecognized option '--no-such-option'" in p.stderr
    assert 'Try "srun --help"' in p.stderr


def test_sbatch_script_runs_and_logs_progress(slurm, tmp_path):
    out = tmp_path / "runs"
    words = ["-N", 2, "--ppn", 1, *SMALL, "--sizes", "8,64", "--out", out]
    script = slurm.run(mpiscope_words("sbatch", *words), cwd=tmp_path)
    assert script.returncode == 0, script.stderr
    assert "#SBATCH --nodes=2" in script.stdout and "#SBATCH --ntasks-per-node=1" in script.stdout
    job_sh = tmp_path / "job.sh"
    job_sh.write_text(script.stdout)
    log = tmp_path / "job.log"
    state = slurm.submit_and_wait(job_sh, log, cwd=tmp_path)
    text = log.read_text()
    assert state == "COMPLETED", text
    # No terminal in a batch job: one plain line per finished benchmark x size, with an ETA.
    steps = re.findall(r"^\[(\d+)/2\] pingpong .*ETA \d\d:\d\d:\d\d\)$", text, re.M)
    assert steps == ["1", "2"], text
    (run,) = [d for d in out.iterdir() if d.is_dir()]
    ctx = store.load(run)[1].context
    assert ctx["status"] == "completed" and ctx["launcher"] == "srun"
    assert "--nodes=2" in ctx["launch_commands"][0]
