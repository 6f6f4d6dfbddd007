# SPDX-License-Identifier: BSD-3-Clause
"""How faithfully emulated links give what they were configured for.

Builds small emulated clusters of 2 hosts, measures them with the engine
under Open MPI (one rank per host), and prints one table per part, measured
against configured:

- rate: median `bw` of 256 KiB and 1 MiB messages on Fast Ethernet (100
  Mbit/s) and GigE (1 Gbit/s) against the TCP payload rate of the line
  rate. Target: within 5%.
- delay: median 8-byte `oneway` with an added delay D (50 us, 200 us, 1 ms)
  minus the median without, against D, the fastest message, and the delay
  program's own report of how far each packet's release strayed from its due
  time (actual - target). Target: within 10%.
- wire: the median one-way time (half a `pingpong` round trip, which needs
  no clock shared by the hosts) of 64 B to 64 KiB messages on 100 Mbit/s
  (without and with a delay of 200 us) minus the median on an unshaped
  link, against the wire formula: the message's frames (Open MPI's
  headers, TCP segments of at most one MSS, each with its IP, TCP and
  Ethernet bytes) serialized at the line rate, plus the delay. Target:
  within 10%.
- jitter: a one-second TCP stream over 100 Mbit/s with delay 200 us +- 150
  us: the delay program's error against each packet's order-constrained due
  time (mean, sd, min, max, packets later than 50 us) and TCP's out-of-order
  queue count (packets must never be reordered).
- loss: the share of 256 KiB one-way messages that waited for a TCP
  retransmission timeout (> 150 ms) at 1% and 2% loss.

These magnitudes depend on the machine and on what else it runs, so
tests/cluster/test_cluster.py asserts only invariants (never early, order kept);
this script measures the magnitudes.

Needs root (emulated clusters are network namespaces); no peer tool.

Every part is measured --trials times (default 5); each table gives the
median over trials of every figure, and the range over trials of the one the
target judges. --lock FILE takes an exclusive lock on FILE for each trial,
so that other MPI jobs on the machine run between trials, not during them.

To reproduce (as root; about five minutes a trial, most of it the loss part):

    .venv/bin/python bench/cluster_links.py --json cluster-links.json
    .venv/bin/python bench/cluster_links.py --only wire --trials 1      # one part
"""

import fcntl

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import benchjson
from mpiscope.store import samples
from mpiscope.store import ingest as store
from mpiscope.engine.build import ensure_engine
from mpiscope.cluster.launching import cluster_launch
from mpiscope.cluster import delay_report, manager, payload_rate
from mpiscope.cluster import state as st
from mpiscope.cluster.spec import DEFAULT_MTU, ETH_OVERHEAD, IP_TCP_HEADERS, make_spec

OMPI_TCP_HEADERS = 16 + 8  # ob1's match header and the TCP BTL's fragment header

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from tcp_stream import STREAM  # noqa: E402  (the test suite's TCP stream program)


def measure(name, tmp, bench, sizes, *extra):
    engine = ensure_engine("openmpi")
    run = Path(tempfile.mkdtemp(dir=tmp))
    out = run / "raw" / "launch-0"
    out.mkdir(parents=True)
    args = [
        "--bench",
        bench,
        "--sizes",
        sizes,
        "--launch",
        "0",
        "--expect-np",
        "2",
        "--out",
        str(out),
        *map(str, extra),
    ]
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
    rows = []
    for label, line in (("fast-ethernet", 100e6), ("gige", 1e9)):
        with Cluster("rate", preset=label) as name:
            for size, window in ((262144, 8), (1048576, 4)):
                reps = 8 if line < 1e9 else 20
                t = measure(
                    name,
                    tmp,
                    "bw",
                    size,
                    "--window-msgs",
                    window,
                    "--reps-min",
                    reps,
                    "--reps-max",
                    reps,
                    "--warmup",
                    2,
                    "--sync",
                    "barrier",
                    "--time-budget",
                    30,
                )
                bw = float(np.median(values(t, "bw", size)))
                want = payload_rate(line)
                rows.append([label, size, bw / 1e6, want / 1e6, 100 * (bw / want - 1)])
    return benchjson.show(
        "rate: median bw against the TCP payload rate of the line rate",
        ["preset", "size B", "measured MB/s", "expected MB/s", "deviation %"],
        rows,
        ["target: within 5%"],
    )


def delay(tmp):
    with Cluster("d0") as name:
        base = float(
            np.median(values(measure(name, tmp, "oneway", 8, "--reps-min", 500, "--time-budget", 2), "oneway", 8))
        )
    rows = [["none", base * 1e6, None, None, None, None, None, None, None, None]]
    for d in ("50us", "200us", "1ms"):
        with Cluster("d", link=f"delay={d}") as name:
            t = measure(name, tmp, "oneway", 8, "--reps-min", 500, "--time-budget", 2)
            rep = delay_report(name)["summary"]
        target = make_spec("x", 2, link=f"delay={d}").link.delay_ns / 1e9
        median = float(np.median(values(t, "oneway", 8)))
        added = median - base
        floor = float(np.min(values(t, "oneway", 8)))
        rows.append(
            [
                d,
                median * 1e6,
                added * 1e6,
                100 * (added / target - 1),
                floor * 1e6,
                rep["packets"],
                rep["error_mean_s"] * 1e6,
                rep["error_sd_s"] * 1e6,
                rep["error_min_s"] * 1e6,
                rep["error_max_s"] * 1e6,
            ]
        )
    return benchjson.show(
        "delay: median 8-byte oneway with delay D, and the added time against D",
        [
            "delay D",
            "median us",
            "added us",
            "added / D - 1 %",
            "fastest us",
            "packets",
            "error mean us",
            "error sd us",
            "error min us",
            "error max us",
        ],
        rows,
        ["error: the delay program's release time minus each packet's due time", "target: within 10%"],
    )


WIRE_SIZES = (64, 256, 1024, 4096, 16384, 65536)
WIRE_ARGS = ("--reps-min", 300, "--reps-max", 600, "--warmup", 5, "--time-budget", 5)
WIRE_LINKS = (("100mbit", "rate=100mbit"), ("100mbit + 200us", "rate=100mbit,delay=200us"))


def wire_time(size, link):
    """A message's time on the wire: its frames serialized at the line rate
    (Open MPI's headers, then TCP segments of at most MSS bytes, each framed),
    plus the configured delay."""
    payload = size + OMPI_TCP_HEADERS
    mss = DEFAULT_MTU - IP_TCP_HEADERS
    frames = -(-payload // mss)
    wire_bytes = payload + frames * (IP_TCP_HEADERS + ETH_OVERHEAD)
    return wire_bytes * 8 / link.rate_bps + link.delay_ns / 1e9


def wire_oneway(spec, tmp):
    """{size: one-way times (half round trips)} on a 2-host cluster with link `spec`,
    one launch per size."""
    with Cluster("w", link=spec) as name:
        return {s: values(measure(name, tmp, "pingpong", s, *WIRE_ARGS), "pingpong", s) for s in WIRE_SIZES}


def wire(tmp):
    base = {s: float(np.median(v)) for s, v in wire_oneway("mtu=1500", tmp).items()}
    rows = []
    for label, spec in WIRE_LINKS:
        link = make_spec("x", 2, link=spec).link
        for s, v in wire_oneway(spec, tmp).items():
            want = wire_time(s, link)
            added = float(np.median(v)) - base[s]
            rows.append(
                [
                    label,
                    s,
                    float(np.median(v)) * 1e6,
                    float(np.min(v)) * 1e6,
                    added * 1e6,
                    want * 1e6,
                    100 * (added / want - 1),
                ]
            )
    return benchjson.show(
        "wire: median one-way time (half a pingpong) on a shaped link minus unshaped, against the wire formula",
        ["link", "size B", "median us", "fastest us", "added us", "wire formula us", "added / formula - 1 %"],
        rows,
        [
            "added: the median minus the median on an unshaped link",
            "wire formula: the frames' bytes (headers, framing) at the line rate + the delay",
            "target: within 10%",
        ],
    )


def jitter(tmp):
    with Cluster("jit", link="rate=100mbit,delay=200us,jitter=150us") as name:
        rsh = str(st.cluster_dir(name) / "rsh")
        recv = subprocess.Popen(
            [rsh, "--argv", "h1", "python3", "-c", STREAM, "recv"], stdout=subprocess.PIPE, text=True
        )
        recv.stdout.readline()
        subprocess.run([rsh, "--argv", "h0", "python3", "-c", STREAM, "send", f"{name}-h1"], check=True, timeout=30)
        received = int(recv.stdout.readline())
        recv.wait(timeout=10)
        netstat = subprocess.run(
            [rsh, "--argv", "h1", "cat", "/proc/net/netstat"], capture_output=True, text=True, check=True
        ).stdout.splitlines()
        names, counts = [l.split() for l in netstat if l.startswith("TcpExt:")][:2]
        ofo = dict(zip(names[1:], counts[1:]))["TCPOFOQueue"]
        rep = delay_report(name)["summary"]
    return benchjson.show(
        "jitter: 1 s TCP stream, 100 Mbit/s, delay 200 us +- 150 us",
        [
            "MB in 1 s",
            "packets",
            "error mean us",
            "error sd us",
            "error min us",
            "error max us",
            "later than 50 us",
            "TCP out-of-order queue",
        ],
        [
            [
                received / 1e6,
                rep["packets"],
                rep["error_mean_s"] * 1e6,
                rep["error_sd_s"] * 1e6,
                rep["error_min_s"] * 1e6,
                rep["error_max_s"] * 1e6,
                rep["late_over_50us"],
                int(ofo),
            ]
        ],
        ["error: the delay program's release time minus each packet's order-constrained due time"],
    )


def loss(tmp):
    rows = []
    for p in ("1%", "2%"):
        with Cluster("loss", link=f"loss={p}") as name:
            t = measure(
                name,
                tmp,
                "oneway",
                262144,
                "--reps-min",
                200,
                "--reps-max",
                200,
                "--warmup",
                1,
                "--sync",
                "barrier",
                "--sync-points",
                2,
                "--time-budget",
                120,
            )
        v = values(t, "oneway", 262144)
        slow = v[v > 0.150]
        rows.append(
            [p, len(v), len(slow), float(np.median(v)) * 1e3, float(np.median(slow)) * 1e3 if len(slow) else None]
        )
    return benchjson.show(
        "loss: 256 KiB oneway messages above 150 ms (retransmission timeouts)",
        ["loss", "samples", "above 150 ms", "median ms", "median of those above ms"],
        rows,
    )


JUDGED = {"rate": 4, "delay": 3, "wire": 6, "jitter": 7, "loss": 2}  # column the target judges


def over_trials(trials, part):
    """One table from a part's tables of every trial (rows in the same order):
    each number the median over trials, and the judged column's range."""
    first, k = trials[0], JUDGED[part]
    rows = []
    for i, row in enumerate(first["rows"]):
        cells = [[t["rows"][i][j] for t in trials] for j in range(len(row))]
        merged = [
            c[0] if len(set(c)) == 1 or not all(isinstance(x, (int, float)) for x in c) else float(np.median(c))
            for c in cells
        ]
        judged = [x for x in cells[k] if isinstance(x, (int, float))]
        rows.append(merged + ([min(judged), max(judged)] if judged else [None, None]))
    col = first["columns"][k]
    return benchjson.show(
        first["title"],
        [*first["columns"], f"{col} min", f"{col} max"],
        rows,
        [*first["notes"], f"median over {len(trials)} trials; min and max: the range over trials"],
    )


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument(
        "--only", choices=("rate", "delay", "wire", "jitter", "loss"), help="measure this part only (default: all five)"
    )
    ap.add_argument("--trials", type=benchjson.count(1, 100), default=5, help="trials of each part (default 5)")
    ap.add_argument("--lock", type=Path, help="a file to lock exclusively during each trial")
    args = benchjson.parse(ap)
    if os.geteuid() != 0:
        sys.exit("emulated clusters need root")
    parts = [p for p in (rate, delay, wire, jitter, loss) if args.only in (None, p.__name__)]
    runs = {p.__name__: [] for p in parts}
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.trials):
            with open(args.lock or os.devnull, "a") as lock:
                if args.lock:
                    fcntl.flock(lock, fcntl.LOCK_EX)
                for part in parts:
                    runs[part.__name__].append(part(tmp))
            print(f"trial {k + 1}/{args.trials} done", file=sys.stderr)
    tables = [over_trials(runs[p.__name__], p.__name__) for p in parts]
    benchjson.write(
        args,
        "cluster_links",
        tables,
        {t["title"].split(":")[0]: benchjson.records(t) for t in tables},
        mpi=benchjson.mpi_names("mpicc.openmpi"),
    )


if __name__ == "__main__":
    main()
