# SPDX-License-Identifier: BSD-3-Clause
"""Emulated clusters for real (root): shaped links measured by the engine, clean removal.

Each test creates its own clusters (names carry this process's id, so two
test sessions do not collide) and removes them, also when it fails.
"""

import contextlib
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from mpiscope.stats import modes

from mpiscope.store import samples

from mpiscope.store import ingest as store
from mpiscope.engine.build import ensure_engine
from mpiscope.cluster.launching import cluster_launch
from mpiscope.cluster import delay_report, manager, payload_rate
from mpiscope.cluster import helpers, netns as ns
from mpiscope.cluster import state as st
from mpiscope.cluster.features import MissingFeature, probe
from mpiscope.cluster.spec import make_spec
from mpiscope.common.errors import UsageError
from tcp_stream import STREAM

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="emulated clusters need root")

TAG = os.getpid() % 100000


def _name(label):
    return f"t{TAG}-{label}"


def cli(*args):
    cmd = [sys.executable, "-m", "mpiscope.cli", "cluster", *map(str, args)]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


@contextlib.contextmanager
def cluster(label, hosts, **kwargs):
    name = _name(label)
    manager.up(make_spec(name, hosts, **kwargs))
    try:
        yield name
    finally:
        manager.teardown(name)


def measure(name, np_, tmp_path, bench, sizes, *extra, mpi="openmpi"):
    """Runs the engine across the cluster; returns (samples table, extra context)."""
    engine = ensure_engine(mpi)
    run = tmp_path / f"{name}-{bench.replace(',', '-')}"
    out = run / "raw" / "launch-0"
    out.mkdir(parents=True)
    args = ["--bench", bench, "--sizes", sizes, "--launch", "0", "--expect-np", str(np_),
            "--out", str(out), *map(str, extra)]
    argv, env, context = cluster_launch(name, mpi, np_, engine, args)
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    table = store.ingest(run, {"run_id": run.name, **context})
    return table, context


def _median(table, bench, size):
    v = samples.sample_values(table, bench, size).values
    assert len(v) > 0, (bench, size)
    return float(np.median(v)), v


def _nothing_left(name, pids=()):
    """No namespace, state, UTS mount, firewall rule or process of cluster `name` remains."""
    assert ns.list_netns(name) == []
    assert not st.cluster_dir(name).exists()
    assert manager._our_delay_programs(name) == []
    for pid in pids:
        assert not ns.alive(pid), pid
    with open("/proc/self/mountinfo") as f:
        assert str(st.cluster_dir(name)) not in f.read()
    rules = subprocess.run(["iptables-save"], capture_output=True, text=True).stdout
    assert "MPISCOPE" not in rules and "198.18." not in rules


# ---- shaped links, measured ----

def test_rate_fast_ethernet_bandwidth_is_the_payload_rate(tmp_path):
    with cluster("rate", 2, link="rate=100mbit") as name:
        table, ctx = measure(name, 2, tmp_path, "bw", 262144, "--window-msgs", 8,
                             "--reps-min", 8, "--reps-max", 8, "--warmup", 2, "--sync", "barrier",
                             "--time-budget", 30)
    bw, values = _median(table, "bw", 262144)
    expected = payload_rate(100e6)  # 11.77 MB/s
    # The shaped rate is a cap that load cannot lift: no window of 2 MB beat it (its
    # token bucket holds one frame). How close it comes is bench/cluster_links.py's.
    assert 0 < bw and values.max() <= 1.02 * expected, (bw, values.max(), expected)
    # the ranks ran on two distinct hosts, and the context holds the ground truth
    assert set(samples.table_context(table)["hosts"]) == {f"{name}-h0", f"{name}-h1"}
    assert ctx["cluster"]["link"]["rate_bps"] == 100e6
    assert ctx["cluster"]["link"]["payload_rate_Bps"] == pytest.approx(expected)
    assert ctx["cluster"]["placement"] == [f"{name}-h0", f"{name}-h1"]


# Tolerances for invariants (accuracy itself is measured by bench/cluster_links.py):
# two clock syncs (one per run) may each be off by some microseconds, more on a loaded
# machine. The delay program starts a verdict early by its usual verdict duration
# (< 50 us by construction) plus half its usual timer lateness, so that deliveries land
# on their due times on average; a packet may thus arrive that much early (seen: up to
# 45 us, also beside a CPU hog), never more.
SYNC_TOL = 25e-6
EARLY_TOL_NS = 100_000


def _never_early(report, delay_ns, jitter_ns=0):
    """Every queue of the delay program held every packet at least its due time (arrival
    plus the drawn delay, moved later only to keep its flow in order; on a queue of sent
    packets, their wire time), within timer resolution, and lost no verdict. Returns how
    many arriving packets were held for the delay."""
    queues = [q for q in report["detail"]["queues"] if q["packets"]]
    arriving = [q for q in queues if not q["rate_bps"]]
    assert arriving, report["detail"]
    for q in arriving:
        assert q["delay_ns"] == delay_ns and q["jitter_ns"] == jitter_ns, q
    for q in queues:
        assert q["error_min_ns"] >= -EARLY_TOL_NS, q
        assert q["verdict_errors"] == 0, q
    return sum(q["packets"] for q in arriving)


def test_delay_raises_one_way_time_by_the_delay(tmp_path):
    d = 200e-6
    with cluster("base", 2) as name:
        _, base = _median(measure(name, 2, tmp_path, "oneway", 8, "--reps-min", 300,
                                  "--time-budget", 2)[0], "oneway", 8)
    with cluster("delay", 2, link="delay=200us") as name:
        table, ctx = measure(name, 2, tmp_path, "oneway", 8, "--reps-min", 300, "--time-budget", 2)
        report = delay_report(name)
    _, delayed = _median(table, "oneway", 8)
    assert ctx["cluster"]["link"]["delay_s"] == pytest.approx(d)
    # The delay program held every packet at least its delay (within timer resolution),
    # in both directions ...
    assert _never_early(report, 200_000) >= 600, report["summary"]
    # ... so even the fastest delayed message took the fastest undelayed path plus the
    # delay, less at most the program's own earliest release. Load only ever adds time,
    # so there is no upper bound here.
    floor = base.min() + d + report["summary"]["error_min_s"] - SYNC_TOL
    assert delayed.min() >= floor, (base.min(), delayed.min(), report["summary"])


def test_loss_shows_retransmission_timeouts(tmp_path):
    # Few clock-sync points: on a lossy link every lost small message costs a 200 ms timeout.
    with cluster("loss", 2, link="loss=2%") as name:
        table, _ = measure(name, 2, tmp_path, "oneway", 262144, "--reps-min", 100,
                           "--reps-max", 100, "--warmup", 1, "--sync", "barrier",
                           "--sync-points", 2, "--time-budget", 60)
    median, values = _median(table, "oneway", 262144)
    assert median < 0.1, median
    # TCP's minimum retransmission timeout is 200 ms: some messages wait for it
    slow = int(np.sum(values > 0.150))
    assert slow >= 1, np.sort(values)[-10:]
    # ... and the analysis calls them retransmission timeouts once there are
    # enough of them to form a mode of their own (usually 10-25 of 100)
    if slow >= 16:
        found = modes.detect_modes(values, rto=0.2)["modes"]
        assert any(m["rto_suspect"] for m in found), found


def test_uplink_between_switches_is_the_bottleneck(tmp_path):
    with cluster("2sw", 4, switches=2, link="rate=100mbit", uplink="rate=10mbit") as name:
        table, ctx = measure(name, 4, tmp_path, "multipair,pairs", 16384, "--pairs", "0:1,2:3",
                             "--reps-min", 20, "--reps-max", 20, "--warmup", 2,
                             "--sync", "barrier")
    # multipair pairs rank p with p + 2: h0-h2 and h1-h3 cross the uplink; the pairs stay home.
    # Each link's rate is a floor on the time of every message over it (load only adds):
    # across the 10 Mbit/s uplink at least the serialization of 16 KiB at 10 Mbit/s, ten
    # times what the 100 Mbit/s links alone impose (token buckets: one frame, so 3/4 of it).
    _, across = _median(table, "multipair", 16384)
    _, within = _median(table, "pairs", 16384)
    assert across.min() >= 0.75 * 16384 / payload_rate(10e6), np.sort(across)[:5]
    assert within.min() >= 0.75 * 16384 / payload_rate(100e6), np.sort(within)[:5]
    hosts = ctx["cluster"]["hosts_detail"]
    assert [h["switch"] for h in hosts] == [0, 0, 1, 1]
    assert [p["uplinks"] for p in ctx["cluster"]["paths"]] == [0, 1]
    assert ctx["cluster"]["paths"][1]["bottleneck_rate_bps"] == 10e6


def test_mpich_runs_across_hosts(tmp_path):
    with cluster("mpich", 2, link="rate=1gbit") as name:
        # barrier starts: MPICH's ranks busy-poll, and a start window suffers from that
        table, ctx = measure(name, 2, tmp_path, "pingpong", 8, "--reps-min", 20, "--reps-max", 50,
                             "--sync", "barrier", "--time-budget", 2, mpi="mpich")
    # results, not speed: every round trip measured and positive (load only makes them longer)
    _, values = _median(table, "pingpong", 8)
    assert np.all(values > 0), values.min()
    assert set(samples.table_context(table)["hosts"]) == {f"{name}-h0", f"{name}-h1"}


# ---- creation and removal ----

def test_cli_up_exec_list_down_leaves_nothing():
    name = _name("cli")
    p = cli("up", name, "--hosts", 4, "--switches", 2, "--link", "rate=100mbit,delay=50us,loss=0.1%",
            "--uplink", "rate=10mbit,delay=20us")
    try:
        assert p.returncode == 0, p.stderr
        assert f"{name}-h3" in p.stdout and "198.18.1.2" in p.stdout
        state = st.read(name)
        delayd_pid = state["delayd"]["pid"]
        assert ns.alive(delayd_pid)
        # a host has its own name and address and no route out of 198.18.0.0/16
        p = cli("exec", name, "h2", "--", "sh", "-c", "hostname; ip -4 -o addr show eth0; ip route")
        assert p.returncode == 0, p.stderr
        lines = p.stdout.splitlines()
        assert lines[0] == f"{name}-h2" and "198.18.1.1/16" in lines[1]
        assert lines[2:] == ["198.18.0.0/16 dev eth0 proto kernel scope link src 198.18.1.1 "]
        assert cli("exec", name, "h1", "--", "sh", "-c", "exit 7").returncode == 7
        # a routing lookup only (no packet leaves): nothing outside the cluster is reachable
        p = cli("exec", name, "h0", "--", "ip", "route", "get", "192.0.2.1")
        assert p.returncode != 0 and "unreachable" in p.stderr
        # hosts reach each other by name across the uplink
        p = cli("exec", name, "h0", "--", "python3", "-c",
                "import socket; s = socket.create_connection(('%s-h3', 9), 2)" % name)
        assert "Connection refused" in p.stderr  # nothing listens, but the host answered
        listed = cli("list")
        assert name in listed.stdout and "10mbit" in listed.stdout
        # a process left running inside a host is stopped by down
        sleeper = subprocess.Popen([str(st.cluster_dir(name) / "rsh"), "--argv", "h1", "sleep", "300"])
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not ns.pids_in_netns(f"mps-{name}-h1"):
            time.sleep(0.05)
        inside = ns.pids_in_netns(f"mps-{name}-h1")
        assert inside
        p = cli("down", name)
        assert p.returncode == 0, p.stderr
        sleeper.wait(timeout=10)
        _nothing_left(name, pids=[delayd_pid, *inside])
        assert name not in cli("list").stdout
        assert cli("down", name).returncode == 2  # gone: nothing to remove
    finally:
        manager.teardown(name)


@pytest.mark.parametrize("step", manager.STEPS)
def test_failed_up_removes_everything(step):
    name = _name("fail")
    spec = make_spec(name, 4, switches=2, link="rate=100mbit,delay=100us,loss=1%",
                     uplink="delay=10us")
    try:
        with pytest.raises(ns.ClusterError, match="deliberate failure"):
            manager.up(spec, fail_at=step)
        _nothing_left(name)
    finally:
        manager.teardown(name)


def test_up_refuses_an_existing_name_and_non_root(monkeypatch, capsys):
    with cluster("dup", 2) as name:
        p = cli("up", name, "--hosts", 2)
        assert p.returncode == 2 and "exists already" in p.stderr
        assert ns.list_netns(name)  # the existing cluster is untouched
    # As another user (in-process: the checkout need not be readable by one).
    from mpiscope.cli.main import main

    monkeypatch.setattr(os, "geteuid", lambda: 65534)
    assert main(["cluster", "up", _name("user"), "--hosts", "2"]) == 2
    assert "needs root" in capsys.readouterr().err
    assert not ns.list_netns(_name("user"))


def test_missing_kernel_feature_is_named(monkeypatch):
    real_run = ns.run

    def no_tbf(argv, **kw):
        if "tbf" in argv:
            raise ns.ClusterError("Error: Specified qdisc kind is unknown.")
        return real_run(argv, **kw)

    monkeypatch.setattr(ns, "run", no_tbf)
    probe_name = f"mps-probe-{TAG}"
    with pytest.raises(MissingFeature, match="tbf"):
        probe(make_spec(_name("feat"), 2, link="rate=100mbit"), probe_name=probe_name)
    assert not (ns.NETNS_DIR / probe_name).exists()
    # a missing feature is bad input to `up` (exit 2 in the CLI): nothing was created
    assert issubclass(MissingFeature, UsageError)


def test_launch_refuses_more_ranks_than_slots():
    with cluster("slots", 2, slots=2) as name:
        with pytest.raises(UsageError, match="does not fit"):
            cluster_launch(name, "openmpi", 5, "/bin/true", [])
        argv, env, ctx = cluster_launch(name, "mpich", 3, "/bin/true", [])
        assert env["UCX_TLS"] == "tcp,self"
        # more ranks than cores: MPICH's ranks get the yield-when-idle library, after any asked for
        oversubscribed = 3 > len(os.sched_getaffinity(0))
        assert ctx["cluster"]["mpi_launch"]["yield_when_idle"] == oversubscribed
        preloads = [argv[i + 2] for i, a in enumerate(argv) if a == "-genv" and argv[i + 1] == "LD_PRELOAD"]
        assert preloads == ([str(helpers.YIELD_LIBRARY)] if oversubscribed else [])
        argv, _, _ = cluster_launch(name, "mpich", 3, "/bin/true", [], preload=["/x/lib.so"])
        preloads = [argv[i + 2] for i, a in enumerate(argv) if a == "-genv" and argv[i + 1] == "LD_PRELOAD"]
        assert preloads == [":".join(["/x/lib.so", *([str(helpers.YIELD_LIBRARY)] if oversubscribed else [])])]
        with pytest.raises(ValueError, match="for MPICH"):
            cluster_launch(name, "openmpi", 2, "/bin/true", [], preload=["/x/lib.so"])
        assert ctx["cluster"]["placement"] == [f"{name}-h0", f"{name}-h0", f"{name}-h1"]
        assert (st.cluster_dir(name) / "hostfile-mpich-3").read_text() == \
            f"{name}-h0:2\n{name}-h1:2\n"


def test_yield_library_takes_mpichs_progress_calls():
    """The library preloaded into oversubscribed MPICH ranks is the one
    MPICH's own progress calls reach (the dynamic linker says which)."""
    library = helpers.ensure(helpers.YIELD_LIBRARY)
    env = {**os.environ, "LD_PRELOAD": str(library), "LD_DEBUG": "bindings"}
    p = subprocess.run([sys.executable, "-c", "import ctypes; ctypes.CDLL('libmpich.so.12')"], env=env,
                       capture_output=True, text=True, check=True)
    bound = [l for l in p.stderr.splitlines() if "libmpich.so" in l.split(" to ")[0] and "`ucp_worker_progress'" in l]
    assert len(bound) == 1 and bound[0].split(" to ")[1].startswith(str(library)), p.stderr[-2000:]


def test_rto_min_is_read_in_every_emulated_host():
    with cluster("rto", 2) as name:
        _, plan = st.load(name)
        h0, h1 = plan.hosts
        # per network namespace: only h1's retransmission timeout is lowered
        subprocess.run(["ip", "netns", "exec", h1.netns, "sh", "-c",
                        "echo 5000 > /proc/sys/net/ipv4/tcp_rto_min_us"], check=True)
        _, _, ctx = cluster_launch(name, "openmpi", 2, "/bin/true", [])
    rto = ctx["rto_min"]
    assert rto["per_host"][h1.hostname]["rto_min_s"] == 0.005
    assert rto["per_host"][h0.hostname]["rto_min_s"] == 0.2
    assert rto["rto_min_s"] == 0.005 and h1.hostname in rto["source"]


def test_launch_refuses_when_the_delay_program_died():
    with cluster("dead", 2, link="delay=100us") as name:
        d = st.read(name)["delayd"]
        os.kill(d["pid"], 9)
        deadline = time.monotonic() + 5
        while ns.alive(d["pid"], d["started"]) and time.monotonic() < deadline:
            time.sleep(0.02)
        with pytest.raises(UsageError, match="delay program .* is not running"):
            cluster_launch(name, "openmpi", 2, "/bin/true", [])


def _tcp_counters(rsh, host):
    text = subprocess.run([rsh, "--argv", host, "cat", "/proc/net/netstat"], capture_output=True,
                          text=True, check=True).stdout.splitlines()
    names, values = [l.split() for l in text if l.startswith("TcpExt:")][:2]
    return dict(zip(names[1:], map(int, values[1:])))


def test_jitter_keeps_every_flow_in_order():
    with cluster("jit", 2, link="rate=100mbit,delay=200us,jitter=150us") as name:
        rsh = str(st.cluster_dir(name) / "rsh")
        recv = subprocess.Popen([rsh, "--argv", "h1", "python3", "-c", STREAM, "recv"],
                                stdout=subprocess.PIPE, text=True)
        assert recv.stdout.readline().strip() == "listening"
        sent = int(subprocess.run([rsh, "--argv", "h0", "python3", "-c", STREAM, "send",
                                   f"{name}-h1"], check=True, timeout=30, capture_output=True,
                                  text=True).stdout)
        received = int(recv.stdout.readline())
        recv.wait(timeout=10)
        counters = _tcp_counters(rsh, "h1")
        report = delay_report(name)
    # Only what holds on any machine: the stream arrived whole and in order, and no packet
    # left before its due time. How late packets were (the error's size) depends on the
    # machine's load: bench/cluster_links.py --only jitter prints it.
    assert received == sent > 0
    # delays drawn from 50..350 us, yet TCP never saw a segment out of order
    assert counters["TCPOFOQueue"] == 0, counters
    # the error is measured against each packet's due time, which keeps its flow in order
    assert _never_early(report, 200_000, 150_000) > 1000, report["summary"]


def test_mpiscope_run_on_a_cluster_records_the_ground_truth(tmp_path):
    from runcli import mpiscope, run_ok

    with cluster("run", 2, link="rate=1gbit") as name:
        run, summary = run_ok("--cluster", name, "--bench", "pingpong", "--sizes", 8, "--reps-max", 30,
                              "--sync", "barrier", "--launcher-args", "--mca btl_tcp_links 1",
                              out=tmp_path)  # -n: every slot
        refused = mpiscope("run", "--cluster", name, "--hostfile", "/etc/hosts", out=tmp_path / "x")
        no_nodes = mpiscope("run", "--cluster", name, "-N", 2, out=tmp_path / "x")
    table, loaded = store.load(run)
    ctx = loaded.context
    assert ctx["np"] == 2 and ctx["cluster"]["link"]["rate_bps"] == 1e9
    assert set(ctx["hosts"]) == {f"{name}-h0", f"{name}-h1"}
    # the launcher's words go to the MPI launcher on the first host, before the engine
    (cmd,) = ctx["launch_commands"]
    engine = next(i for i, w in enumerate(cmd) if w.endswith("mpiscope-engine"))
    assert cmd[engine - 3:engine] == ["--mca", "btl_tcp_links", "1"]
    assert refused.returncode == 2 and "drop --launcher, --hostfile" in refused.stderr
    assert no_nodes.returncode == 2 and "drop -N/--nodes and --ppn" in no_nodes.stderr


# ---- faults: `up` interrupted or killed half-built, the delay program killed

def _wait_for_delay_program(name, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        state = st.read(name) or {}
        if (state.get("delayd") or {}).get("pid"):
            return state["delayd"]
        time.sleep(0.05)
    raise AssertionError(f"cluster {name} never started its delay program")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_an_interrupted_up_leaves_nothing_that_down_does_not_remove(signum):
    name = _name(f"int{int(signum)}")
    cmd = [sys.executable, "-m", "mpiscope.cli", "cluster", "up", name, "--hosts", "2",
           "--link", "delay=100us"]
    # SIGINT as from a terminal: a test run started in the background (`make test &`)
    # inherits SIGINT ignored, and Python then never turns it into KeyboardInterrupt.
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "MPISCOPE_TEST_UP_STALL": "delay"},
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        d = _wait_for_delay_program(name)
        p.send_signal(signum)
        _, err = p.communicate(timeout=120)
        assert p.returncode != 0 and "Traceback" not in err, err
        if signum != signal.SIGKILL:  # up unwinds itself
            assert ns.list_netns(name) == [] and not st.cluster_dir(name).exists(), err
        down = cli("down", name)
        assert "Traceback" not in down.stderr, down.stderr
        assert down.returncode == (0 if signum == signal.SIGKILL else 2), down.stderr
        _nothing_left(name, [d["pid"]])
    finally:
        p.kill()
        p.wait()  # no zombie for a later test's subreaper to find
        manager.teardown(name)


def test_a_run_on_a_cluster_whose_delay_program_died_is_refused_and_down_cleans(tmp_path):
    with cluster("dead2", 2, link="delay=100us") as name:
        d = st.read(name)["delayd"]
        os.kill(d["pid"], 9)
        deadline = time.monotonic() + 5
        while ns.alive(d["pid"], d["started"]) and time.monotonic() < deadline:
            time.sleep(0.02)
        p = subprocess.run([sys.executable, "-m", "mpiscope.cli", "run", "--cluster", name, "-n", "2",
                            "--bench", "pingpong", "--sizes", "8", "--out", str(tmp_path / "runs")],
                           capture_output=True, text=True, timeout=120)
        assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
        assert "delay program" in p.stderr and not (tmp_path / "runs").exists()
        down = cli("down", name)
        assert down.returncode == 0, down.stderr
        _nothing_left(name, [d["pid"]])
