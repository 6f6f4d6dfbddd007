# SPDX-License-Identifier: BSD-3-Clause
"""Faults survived: a rank killed with SIGKILL, `mpiscope run`
interrupted (SIGINT, SIGTERM) or killed, the output file system full, a
samples file cut off. In every case: no traceback, no process left behind, no
half-written file under a final name, and what was measured stays readable.

Processes left behind are caught by making this test process a child
subreaper (Linux): whatever the run leaves (a launcher, a rank, a zombie) is
re-parented here instead of to init, where the test sees it.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from analysis_runs import build_run
from mpiscope.store import ingest as store
from runcli import mpiscope

PR_SET_CHILD_SUBREAPER = 36
# Long enough that every signal lands mid-run: 4 series of up to 1 s each.
LONG = ("-n", 2, "--bench", "pingpong", "--sizes", "8,1K,64K,1M", "--time-budget", 1,
        "--reps-min", 1000000, "--reps-max", 1000000)


@pytest.fixture
def reaper():
    """Makes this process the subreaper of what it starts; yields a function
    that lists the processes re-parented to it (orphans and zombies)."""
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    assert prctl(PR_SET_CHILD_SUBREAPER, 1) == 0

    def adopted(exclude=()):
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in exclude:
                continue
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                comm = Path(f"/proc/{entry}/comm").read_text().strip()
            except OSError:
                continue
            if int(fields[1]) == os.getpid():
                found.append((int(entry), comm, fields[0]))
        return found

    yield adopted
    prctl(PR_SET_CHILD_SUBREAPER, 0)
    with contextlib.suppress(ChildProcessError):  # reap what a failed test left
        while os.waitpid(-1, os.WNOHANG)[0]:
            pass


def _start(out, *args, env=None):
    cmd = [sys.executable, "-m", "mpiscope.cli", "run", *map(str, args), "--out", str(out)]
    env = {**{k: v for k, v in os.environ.items() if k != "MPISCOPE_PROGRESS"}, **(env or {})}
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)


def _wait_for_progress(p, lines=1, timeout=120):
    """Reads stderr until `lines` progress lines ([k/N] …) came; returns what was read."""
    seen, text, deadline = 0, [], time.monotonic() + timeout
    while seen < lines and time.monotonic() < deadline:
        line = p.stderr.readline()
        if not line:
            break
        text.append(line)
        seen += line.startswith("[")
    assert seen == lines, "".join(text)
    return "".join(text)


def _descendants(pid):
    children = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError):
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _engine_ranks(pid):
    ranks = []
    for d in _descendants(pid):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{d}/comm").read_text().strip() == "mpiscope-engine":
                ranks.append(d)
    return ranks


def _finish(p, timeout=120):
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err


def _alive(pid):
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _nothing_left(adopted, p, zombies=False, started=()):
    """No process of the run outlives it: give stragglers a moment, then look.
    `zombies`: the run was SIGKILLed and could collect nothing; what it left may
    be dead and waiting for init (here: this process) to collect it, not alive.
    `started`: the run's processes seen before it was killed, each of which must
    end; a snapshot of /proc alone can miss a rank that is being re-parented
    from its exiting launcher at that moment."""
    def left():
        return ([x for x in adopted(exclude={p.pid}) if not (zombies and x[2] == "Z")]
                + [(pid, "started", "alive") for pid in started if _alive(pid)])

    deadline = time.monotonic() + 60  # a loaded machine collects slowly; nothing may stay
    while left() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left() == []


def _stored_failed(out):
    """The one run under `out`: stored under its final name, failed, readable."""
    names = sorted(d.name for d in out.iterdir())
    runs = [out / n for n in names if not n.startswith(".") and (out / n).is_dir()]
    # (the catalog's lock, once a reader of the catalog has run)
    assert len(runs) == 1 and {n for n in names if n.startswith(".")} <= {".catalog.lock"}, names
    ctx = json.loads((runs[0] / "context.json").read_text())
    assert ctx["status"] == "failed", ctx
    listed = mpiscope("runs", out=out)
    assert listed.returncode == 0 and runs[0].name in listed.stdout and "failed" in listed.stdout
    return runs[0], ctx


def _tmp_names(path):
    return [p for p in Path(path).rglob("*") if ".tmp" in p.name]


# ---- a rank killed, the run interrupted or killed

def test_a_rank_killed_with_sigkill_leaves_a_failed_readable_run(tmp_path, reaper):
    p = _start(tmp_path, *LONG)
    _wait_for_progress(p, 1)
    ranks = _engine_ranks(p.pid)
    assert len(ranks) == 2, ranks
    os.kill(max(ranks), signal.SIGKILL)
    code, _, err = _finish(p)
    assert code == 1 and "Traceback" not in err, err
    assert "run failed: launch 0 exited with code" in err
    run, ctx = _stored_failed(tmp_path)
    table, _ = store.load(run)
    assert len(table) > 0 and 8 in set(table["size"].to_pylist())  # the first series is there
    _nothing_left(reaper, p)
    assert _tmp_names(tmp_path) == []


@pytest.mark.parametrize("signum, mpi", [(signal.SIGINT, "openmpi"), (signal.SIGTERM, "openmpi"),
                                         (signal.SIGINT, "mpich")])
def test_an_interrupted_run_stops_its_ranks_and_is_stored_failed(tmp_path, reaper, signum, mpi):
    p = _start(tmp_path, *LONG, "--mpi", mpi)
    _wait_for_progress(p, 1)
    assert len(_engine_ranks(p.pid)) == 2
    # SIGINT as a terminal sends it (to the whole process group), SIGTERM as kill does.
    (os.killpg if signum == signal.SIGINT else os.kill)(p.pid, signum)
    code, _, err = _finish(p)
    assert code == 1 and "Traceback" not in err, err
    name = signal.Signals(signum).name
    assert f"interrupted ({name})" in err
    run, ctx = _stored_failed(tmp_path)
    assert f"interrupted ({name})" in ctx["error"]
    shown = mpiscope("show", run.name, out=tmp_path)
    assert shown.returncode == 0 and "pingpong" in shown.stdout
    _nothing_left(reaper, p)
    assert _tmp_names(tmp_path) == []


def test_a_killed_run_is_named_and_stored_by_runs_ingest(tmp_path, reaper):
    p = _start(tmp_path, *LONG)
    _wait_for_progress(p, 1)
    assert len(_engine_ranks(p.pid)) == 2
    started = _descendants(p.pid)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    # The launch dies with mpiscope, its ranks with the launch (PR_SET_PDEATHSIG).
    _nothing_left(reaper, p, zombies=True, started=started)
    partial = [d for d in tmp_path.iterdir() if d.name.endswith(".partial")]
    assert len(partial) == 1
    listed = mpiscope("runs", out=tmp_path)
    assert listed.returncode == 0 and str(partial[0]) in listed.stderr
    assert "runs ingest" in listed.stderr
    ingested = mpiscope("runs", "ingest", partial[0], out=tmp_path)
    assert ingested.returncode == 0, ingested.stderr
    run, ctx = _stored_failed(tmp_path)
    assert run.name == partial[0].name[1:-len(".partial")]
    assert "stopped before storing" in ctx["error"]
    assert len(store.load(run)[0]) > 0


def test_ranks_end_with_a_launcher_killed_before_it_could_end_them(tmp_path, reaper):
    """mpirun stopped, mpiscope killed, then mpirun killed: nothing was left to
    end the ranks but the kernel, told by each rank to end it with its launcher."""
    p = _start(tmp_path, *LONG)
    _wait_for_progress(p, 1)
    ranks = _engine_ranks(p.pid)
    launchers = [d for d in _descendants(p.pid) if d not in ranks]
    assert len(ranks) == 2 and launchers, (ranks, launchers)
    for pid in launchers:
        os.kill(pid, signal.SIGSTOP)
    os.kill(p.pid, signal.SIGKILL)
    p.wait()
    for pid in launchers:
        os.kill(pid, signal.SIGKILL)
    _nothing_left(reaper, p, zombies=True, started=ranks + launchers)
    for pid in ranks:  # re-parented here: killed by the kernel, not ended by their own timeout
        try:
            status = os.waitpid(pid, 0)[1]
        except ChildProcessError:
            # When other work shares the CPUs, a rank can be collected before
            # it is re-parented here: it is gone (_nothing_left checked that),
            # and how it ended cannot be read.
            continue
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, status


@pytest.mark.parametrize("mpi", ["openmpi", "mpich"])
def test_a_launch_that_hangs_in_mpi_finalize_is_stopped_and_its_samples_kept(tmp_path, reaper, mpi):
    """A rank that never returns from MPI_Finalize (as MPICH 4.0's ch4:ucx can):
    once every rank has stored its samples, the launch is stopped after the
    grace (1 s here, 60 by default) and the run is stored whole."""
    p = _start(tmp_path, "-n", 2, "--bench", "pingpong,allreduce", "--sizes", "8,1K",
               "--mpi", mpi, "--reps-min", 50, "--reps-max", 50, "--json",
               env={"MPISCOPE_TEST_FINALIZE_HANG": "1", "MPISCOPE_TEST_FINALIZE_GRACE_S": "1"})
    code, out, err = _finish(p)
    assert code == 0 and "Traceback" not in err, err
    assert "did not return from MPI_Finalize within 1 s" in err
    run = Path(json.loads(out)["run_dir"])
    ctx = json.loads((run / "context.json").read_text())
    assert ctx["status"] == "completed" and ctx["finalize_stopped"] == {"launches": [0], "after_s": 1.0}
    table, _ = store.load(run)
    reps = {}   # every series whole: its 50 repetitions
    for b, s, r in zip(*(table[c].to_pylist() for c in ("bench", "size", "rep"))):
        reps.setdefault((b, s), set()).add(r)
    assert {k: len(v) for k, v in reps.items()} == \
        {(b, s): 50 for b in ("pingpong", "allreduce") for s in (8, 1024)}
    _nothing_left(reaper, p)


# ---- the output file system full

@pytest.fixture
def small_fs(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    mnt = tmp_path / "full"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mnt)], check=True)
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)


def test_a_full_disk_leaves_a_failed_run_and_its_raw_files(tmp_path, small_fs, reaper):
    p = _start(small_fs, "-n", 2, "--bench", "pingpong", "--sizes", "8,64,512,4K,32K,256K",
               "--reps-min", 4000, "--reps-max", 4000, "--time-budget", 10)
    code, _, err = _finish(p)
    assert code == 1 and "Traceback" not in err, err
    run, ctx = _stored_failed(small_fs)
    assert "space" in ctx["error"].lower(), ctx["error"]
    assert (run / "raw").is_dir()
    assert _tmp_names(small_fs) == []
    _nothing_left(reaper, p)
    # Space elsewhere: the raw files give back what was measured.
    moved = tmp_path / "roomy"
    moved.mkdir()
    shutil.copytree(run, moved / run.name)
    again = mpiscope("runs", "ingest", run.name, out=moved)
    assert again.returncode == 0, again.stderr
    assert len(store.load(moved / run.name)[0]) > 0
    # Full before anything ran: refused, nothing created.
    before = sorted(p.name for p in small_fs.iterdir())
    (small_fs / "filler").write_bytes(b"")
    with contextlib.suppress(OSError), open(small_fs / "filler", "wb") as f:
        f.write(b"\0" * (2 << 20))
    refused = mpiscope("run", "-n", 2, "--bench", "pingpong", "--sizes", 8, out=small_fs)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr, refused.stderr
    assert "no space left on the device" in refused.stderr
    assert sorted(p.name for p in small_fs.iterdir()) == sorted(before + ["filler"])


# ---- a damaged samples file (no MPI: a synthetic run with raw files)

def test_a_cut_off_samples_file_is_named_and_rebuilt_from_the_raw_files(tmp_path):
    out = tmp_path / "runs"
    run = build_run(out, "20240101-000000-aaaa", "2024-01-01T00:00:00+00:00",
                    benches=("pingpong", "bw"), sizes=[1, 64, 4096])
    rows = len(store.load(run)[0])
    path = run / store.SAMPLES_FILE
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    for command in (["show"], ["fit"], ["export", "--format", "csv"],
                    ["report", "-o", tmp_path / "r.html"]):
        p = mpiscope(*command, "latest", out=out)
        assert p.returncode == 2 and "Traceback" not in p.stderr, (command, p.stderr)
        assert f"{path} is damaged" in p.stderr and "mpiscope runs ingest" in p.stderr
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert not (tmp_path / "r.html").exists()
    p = mpiscope("runs", "ingest", "latest", out=out)
    assert p.returncode == 0 and "ingested 20240101-000000-aaaa" in p.stdout, p.stderr
    assert len(store.load(run)[0]) == rows
    assert mpiscope("show", "latest", out=out).returncode == 0


# ---- a failed launch shows the launcher's own explanation

def test_an_unreachable_host_fails_with_the_launchers_reason(tmp_path, reaper):
    hosts = tmp_path / "hosts"
    hosts.write_text("localhost slots=1\nno-such-host.invalid slots=1\n")
    p = mpiscope("run", "-n", 2, "--bench", "pingpong", "--sizes", 8, "--hostfile", hosts,
                 "--launcher-args", "--map-by node", out=tmp_path / "runs", timeout=120)
    assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
    failed = [l for l in p.stderr.splitlines() if l.startswith("mpiscope: run failed:")]
    assert failed and "no-such-host" in failed[0], p.stderr
    assert "orte_base_help_aggregate" not in failed[0]


def test_writing_a_report_or_an_export_to_a_full_disk_leaves_nothing(tmp_path, small_fs):
    out = tmp_path / "runs"
    build_run(out, "20240101-000000-aaaa", "2024-01-01T00:00:00+00:00",
              benches=("pingpong", "bw"), sizes=[1, 64, 4096])
    with contextlib.suppress(OSError), open(small_fs / "filler", "wb") as f:
        f.write(b"\0" * (2 << 20))
    for command in (["report", "-o", small_fs / "r.html"],
                    ["export", "--format", "csv", "-o", small_fs / "x.csv"]):
        p = mpiscope(*command, "latest", out=out)
        assert p.returncode == 1 and "Traceback" not in p.stderr, p.stderr
        assert p.stderr.strip() == (f"mpiscope: error: {command[-1]}: no space left on the device; "
                                    "free space or write somewhere else")
        assert sorted(x.name for x in small_fs.iterdir()) == ["filler"]  # nothing half-written
