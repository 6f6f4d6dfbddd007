# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope run` launcher options on real local ranks: --launcher-args,
--ppn, hostfiles, --dry-run, a failed launch's message, an MPICH engine
started by Open MPI's launcher refused, and the scripts `mpiscope sbatch`
prints."""

import json
import re
import shlex

import pytest

from mpiscope.measure import launch
from mpiscope.store import ingest as store
from runcli import mpiscope, run_dirs, run_ok

SMALL = ["--bench", "pingpong", "--sizes", "8,64", "--reps-max", "30", "--time-budget", "0.5"]


def _dry(*args, out):
    p = mpiscope("run", *args, "--dry-run", "--json", out=out)
    assert p.returncode == 0, p.stderr
    assert not out.exists()  # nothing written, not even the output root
    return json.loads(p.stdout)


def _without_run_id(argv):
    return [re.sub(r"\.\d{8}-\d{6}-[0-9a-f]{4}\.partial", "RUN", w) for w in argv]


def test_dry_run_prints_the_command_the_run_executes(tmp_path):
    args = ["-n", 2, "--ppn", 2, "--launcher-args", "--mca btl self,tcp", *SMALL]
    dry = _dry(*args, out=tmp_path / "dry")
    (planned,) = dry["launches"]
    # the launcher's words, as words, after mpiscope's own and before the engine
    argv = planned["argv"]
    engine = next(i for i, w in enumerate(argv) if w.endswith("mpiscope-engine"))
    assert argv[engine - 3:engine] == ["--mca", "btl", "self,tcp"]
    assert argv[argv.index("--map-by") + 1] == "ppr:2:node"

    p = mpiscope("run", *args, "--json", out=tmp_path / "real")
    assert p.returncode == 0, p.stderr
    run = json.loads(p.stdout)["run_dir"]
    ctx = store.load(run)[1].context
    (executed,) = ctx["launch_commands"]
    assert _without_run_id(executed) == _without_run_id(
        [w.replace(str(tmp_path / "dry"), str(tmp_path / "real")) for w in argv])
    # Without a terminal: one plain line per finished benchmark x size, with the time left.
    lines = re.findall(r"^\[(\d)/2\] pingpong (\d+) .*left ~\d+:\d\d:\d\d \(ETA \d\d:\d\d:\d\d\)$",
                       p.stderr, re.M)
    assert lines == [("1", "8"), ("2", "64")], p.stderr


def test_dry_run_counts_series_and_bounds_the_wall_time(tmp_path):
    dry = _dry("-n", 2, "--bench", "pingpong,barrier,flood", "--sizes", "8,1K,4K", "--queue-depths", "1,4",
               "--launches", 2, "--time-budget", 0.5, out=tmp_path / "runs")
    # barrier is sizeless, flood has a variant per queue depth
    assert dry["series_per_launch"] == {"pingpong": 3, "barrier": 1, "flood": 6}
    assert dry["series"] == 20 and len(dry["launches"]) == 2
    assert dry["wall_time_max_s"] == pytest.approx(20 * 0.5 + 2 * 5.0)
    text = mpiscope("run", "-n", 2, "--bench", "pingpong", "--sizes", 8, "--dry-run",
                    out=tmp_path / "runs")
    assert text.returncode == 0 and "nothing was run" in text.stdout
    assert re.search(r"^launch 0: .*mpirun\.openmpi -n 2 ", text.stdout, re.M)


def test_hostfile_in_any_syntax_is_written_in_the_launchers(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("alpha slots=2\nbeta:3\ngamma\n")
    for mpi, expected in (("openmpi", "alpha slots=2\nbeta slots=3\ngamma slots=1\n"),
                          ("mpich", "alpha:2\nbeta:3\ngamma:1\n")):
        dry = _dry("--mpi", mpi, "--hostfile", hosts, *SMALL, out=tmp_path / "runs")
        assert dry["hostfile"] == expected
        argv = dry["launches"][0]["argv"]
        assert argv[argv.index("-n") + 1] == "6"  # -n defaults to the hostfile's slots
    dry = _dry("--launcher", "srun", "--hostfile", hosts, "-N", 2, "--ppn", 1, *SMALL, out=tmp_path / "runs")
    assert dry["hostfile"] == "alpha\nbeta\n"
    assert dry["launches"][0]["env"]["SLURM_HOSTFILE"].endswith("/hostfile")


def test_oversubscribing_hostfile_runs_unbound_and_says_so(tmp_path):
    # More ranks on this machine than it has CPUs, as the hostfile allows: binding
    # every rank to a core of its own is impossible (mpirun refused it before).
    np = launch.local_cpus() + 1
    hosts = tmp_path / "hosts"
    hosts.write_text(f"localhost slots={np}\n")
    p = mpiscope("run", "--hostfile", hosts, *SMALL, "--json", out=tmp_path / "runs")
    assert p.returncode == 0, p.stderr
    assert f"the hostfile puts {np} ranks on {np} slots" in p.stderr and "binds no rank" in p.stderr
    ctx = store.load(json.loads(p.stdout)["run_dir"])[1].context
    (cmd,) = ctx["launch_commands"]
    assert ctx["np"] == np and not any(w.startswith("--bind-to") for w in cmd)


def test_mpich_ppn_runs(tmp_path):
    run, _ = run_ok("--mpi", "mpich", "-n", 2, "--ppn", 2, *SMALL, out=tmp_path)
    cmd = store.load(run)[1].context["launch_commands"][0]
    assert cmd[cmd.index("-ppn") + 1] == "2"


def test_failed_launch_shows_the_launchers_whole_message(tmp_path):
    p = mpiscope("run", "-n", 2, "--launcher-args", "--no-such-option", *SMALL, out=tmp_path)
    assert p.returncode == 1
    # mpirun's complaint and the hint after it, in order
    first = p.stderr.index('unknown option "--no-such-option"')
    assert p.stderr.index("for usage", first) > first
    (run,) = run_dirs(tmp_path)
    assert store.load(run)[1].context["failed_launch"] == 0


@pytest.mark.parametrize("args, needle", [
    (["--launcher-args", "--mca btl 'self"], "--launcher-args: No closing quotation"),
    (["-N", 2, "-n", 3], "-n 3 ranks do not split evenly over -N 2 nodes"),
    (["-N", 2, "--ppn", 2, "-n", 2], "-n 2 is not -N 2 nodes x --ppn 2"),
    (["--ppn", 0], "--ppn must be at least 1"),
    (["-N", 2, "--launcher-args", "--map-by node"], "give one or the other"),
    (["--launcher", "srun", "--ppn", 1, "--launcher-args", "--ntasks-per-node=2"], "give one or the other"),
])
def test_bad_launcher_options(tmp_path, args, needle):
    p = mpiscope("run", *args, *SMALL, out=tmp_path)
    assert p.returncode == 2 and needle in p.stderr, p.stderr
    assert run_dirs(tmp_path) == []


def test_bad_hostfile_line_is_named(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("a slots=2\nb slots=two\n")
    p = mpiscope("run", "--hostfile", hosts, *SMALL, out=tmp_path / "runs")
    assert p.returncode == 2 and f"{hosts}:2: the slot count" in p.stderr
    assert not (tmp_path / "runs").exists()


def test_sbatch_script_asks_slurm_for_the_ranks_and_runs_the_same_options(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("n1 slots=4\nn2 slots=4\n")
    p = mpiscope("sbatch", "-N", 2, "--ppn", 1, "--hostfile", hosts, *SMALL, "--time-budget", 30,
                 "--partition", "short", "--job-name", "lat", "--launcher-args", "--mpi=pmix")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "#!/bin/bash"
    directives = [l.split(" ", 1)[1] for l in lines if l.startswith("#SBATCH ")]
    # two series at most 30 s each and a start-up: twice that, at least 5 minutes
    assert directives == ["--job-name=lat", "--ntasks=2", "--nodes=2", "--ntasks-per-node=1",
                          "--nodelist=n1,n2", "--time=0:05:00", "--partition=short"]
    run = shlex.split(lines[-1])
    assert run[0] == "exec" and run[2:5] == ["-m", "mpiscope.cli", "run"]
    words = run[5:]
    assert words[:2] == ["--launcher", "srun"] and words.count("--time-budget") == 2
    assert "--partition" not in words and "--job-name" not in words
    assert words[words.index("--launcher-args") + 1] == "--mpi=pmix"


def test_sbatch_refuses_bad_input_and_prints_no_script(tmp_path):
    p = mpiscope("sbatch", "--bench", "pingpang")
    assert p.returncode == 2 and p.stdout == "" and "unknown benchmark 'pingpang'" in p.stderr


def test_mpich_engine_started_by_open_mpi_launcher(tmp_path):
    # Each rank comes up as a singleton: the engine must notice and refuse.
    p = mpiscope("run", "-n", 2, "--mpi", "mpich", "--mpirun", "mpirun.openmpi", "--bench", "pingpong",
                 "--sizes", 8, out=tmp_path)
    assert p.returncode == 2 and "1 rank(s) but 2 were asked for" in p.stderr, (p.returncode, p.stderr)
    assert run_dirs(tmp_path) == []
