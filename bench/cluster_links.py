"""How faithfully do emulated links give what they were configured for?

Builds small emulated clusters (root), measures them with the engine under
Open MPI, and prints measured against configured:

- rate: `bw` of 256 KiB and 1 MiB messages against the TCP payload rate of
  the line rate (100 Mbit/s and 1 Gbit/s); target within 5%;
- delay: median 8-byte `oneway` with delay D minus without, against D, plus
  the delay program's own report of how far it strayed; target within 10%;
- jitter: a one-second TCP stream over 100 Mbit/s with delay 200 us +- 150 us:
  the delay program's error against each packet's order-constrained due time
  (mean, sd, min, max, packets later than 50 us) and TCP's out-of-order count;
- loss: share of 256 KiB one-way messages that waited for a retransmission
  timeout (> 150 ms) at 1% and 2% loss.

These magnitudes depend on the machine and its load, so tests/test_cluster.py
asserts only invariants (never early, order kept); the numbers are here.

    flock /tmp/mpiscope-mpi.lock .venv/bin/python bench/cluster_links.py [--only rate|delay|jitter|loss]
"""

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from mpiscope.store import samples

from mpiscope.store import ingest as store
from mpiscope.engine.build import ensure_engine
from mpiscope.cluster.launching import cluster_launch
from mpiscope.cluster import delay_report, manager, payload_rate
from mpiscope.cluster import state as st
from mpiscope.cluster.spec import make_spec

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from tcp_stream import STREAM  # noqa: E402  (the test suite's TCP stream program)


def measure(name, tmp, bench, sizes, *extra):
    engine = ensure_engine("openmpi")
    run = Path(tempfile.mkdtemp(dir=tmp))
    out = run / "raw" / "launch-0"
    out.mkdir(parents=True)
    args = ["--bench", bench, "--sizes", sizes, "--launch", "0", "--expect-np", "2",
            "--out", str(out), *map(str, extra)]
    argv, env, context = cluster_launch(name, "openmpi", 2, engine, args)
    subprocess.run(argv, env=env, check=True, capture_output=True, stdin=subprocess.DEVNULL)
    return store.ingest(run, {"run_id": run.name, **context})


def values(table, bench, size):
    return samples.sample_values(table, bench, size).values


class Cluster:
    def __init__(self, label, **kw):
        self.name = f"bench{os.getpid() % 10000}-{label}"
        self.spec = make_spec(self.name, 2, **kw)

    def __enter__(self):
        manager.up(self.spec)
        return self.name

    def __exit__(self, *exc):
        manager.teardown(self.name)


def rate(tmp):
    print("rate: bw (MB/s, median) against the TCP payload rate of the line rate")
    for label, line in (("fast-ethernet", 100e6), ("gige", 1e9)):
        with Cluster("rate", preset=label) as name:
            for size, window in ((262144, 8), (1048576, 4)):
                reps = 8 if line < 1e9 else 20
                t = measure(name, tmp, "bw", size, "--window-msgs", window, "--reps-min", reps,
                            "--reps-max", reps, "--warmup", 2, "--sync", "barrier",
                            "--time-budget", 30)
                bw = float(np.median(values(t, "bw", size)))
                want = payload_rate(line)
                print(f"  {label:14s} {size:8d} B: {bw / 1e6:7.2f} MB/s, expected {want / 1e6:7.2f}"
                      f" ({bw / want - 1:+.1%})")


def delay(tmp):
    print("delay: median 8-byte oneway with delay D minus without (us)")
    with Cluster("d0") as name:
        base = float(np.median(values(measure(name, tmp, "oneway", 8, "--reps-min", 500,
                                              "--time-budget", 2), "oneway", 8)))
    print(f"  no delay: {base * 1e6:.1f} us")
    for d in ("50us", "200us", "1ms"):
        with Cluster("d", link=f"delay={d}") as name:
            t = measure(name, tmp, "oneway", 8, "--reps-min", 500, "--time-budget", 2)
            rep = delay_report(name)["summary"]
        target = make_spec("x", 2, link=f"delay={d}").link.delay_ns / 1e9
        added = float(np.median(values(t, "oneway", 8))) - base
        floor = float(np.min(values(t, "oneway", 8)))
        print(f"  D = {d:6s}: added {added * 1e6:8.1f} us ({added / target - 1:+.1%}), fastest "
              f"{floor * 1e6:.1f} us; delay program: {rep['packets']} packets, actual - target mean "
              f"{rep['error_mean_s'] * 1e6:+.2f} us, sd {rep['error_sd_s'] * 1e6:.1f} us, min "
              f"{rep['error_min_s'] * 1e6:+.1f} us, max {rep['error_max_s'] * 1e6:+.1f} us")


def jitter(tmp):
    print("jitter: 1 s TCP stream, 100 Mbit/s, delay 200 us +- 150 us; delay program's error "
          "against each packet's order-constrained due time")
    with Cluster("jit", link="rate=100mbit,delay=200us,jitter=150us") as name:
        rsh = str(st.cluster_dir(name) / "rsh")
        recv = subprocess.Popen([rsh, "--argv", "h1", "python3", "-c", STREAM, "recv"],
                                stdout=subprocess.PIPE, text=True)
        recv.stdout.readline()
        subprocess.run([rsh, "--argv", "h0", "python3", "-c", STREAM, "send", f"{name}-h1"],
                       check=True, timeout=30)
        received = int(recv.stdout.readline())
        recv.wait(timeout=10)
        netstat = subprocess.run([rsh, "--argv", "h1", "cat", "/proc/net/netstat"],
                                 capture_output=True, text=True, check=True).stdout.splitlines()
        names, counts = [l.split() for l in netstat if l.startswith("TcpExt:")][:2]
        ofo = dict(zip(names[1:], counts[1:]))["TCPOFOQueue"]
        rep = delay_report(name)["summary"]
    print(f"  {received / 1e6:.2f} MB in 1 s; {rep['packets']} packets: error mean "
          f"{rep['error_mean_s'] * 1e6:+.2f} us, sd {rep['error_sd_s'] * 1e6:.1f} us, min "
          f"{rep['error_min_s'] * 1e6:+.1f} us, max {rep['error_max_s'] * 1e6:+.1f} us, "
          f"{rep['late_over_50us']} later than 50 us; TCP out-of-order queue: {ofo}")


def loss(tmp):
    print("loss: 256 KiB oneway messages, share above 150 ms (retransmission timeouts)")
    for p in ("1%", "2%"):
        with Cluster("loss", link=f"loss={p}") as name:
            t = measure(name, tmp, "oneway", 262144, "--reps-min", 200, "--reps-max", 200,
                        "--warmup", 1, "--sync", "barrier", "--sync-points", 2,
                        "--time-budget", 120)
        v = values(t, "oneway", 262144)
        slow = v[v > 0.150]
        print(f"  loss {p}: {len(slow)}/{len(v)} samples above 150 ms; median {np.median(v) * 1e3:.2f} ms"
              + (f", slow ones median {np.median(slow) * 1e3:.0f} ms" if len(slow) else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("rate", "delay", "jitter", "loss"))
    args = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("emulated clusters need root")
    with tempfile.TemporaryDirectory() as tmp:
        for part in (rate, delay, jitter, loss):
            if args.only in (None, part.__name__):
                part(tmp)


if __name__ == "__main__":
    main()
