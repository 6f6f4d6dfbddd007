# SPDX-License-Identifier: BSD-3-Clause
"""Do the differences Hamid (2008, chapter 3) found between MPI benchmarks
show on this machine?

One `mpiscope run --methods all` of pingpong, bw, barrier, bcast,
allreduce and alltoall at 8 B, 1 KiB, 64 KiB and 1 MiB; then, from its
stored rows and `mpiscope methods`, each observation the thesis reports
that should hold on any machine, with the size of the effect measured here:

- back-to-back collectives report less than synchronized ones at small
  sizes (thesis 3.8: SKaMPI's synchronized barrier above PMB's and
  MPIBench's): the back-to-back reference's median call / mpiscope's
  synchronized median, at 8 B (holds below 1);
- the root of a broadcast finishes before its slowest rank (thesis 4.4):
  the root's mean time / the slowest rank's mean, over the same
  repetitions of MPIBench's method (holds below 1);
- SKaMPI's reported mean of per-repetition maxima is at least the largest
  of its per-rank means (thesis 3.9, where SKaMPI's average seemed too
  high): their ratio (holds at 1 or above);
- Mpptest's minimum of loop means reports the highest ping-pong bandwidth
  (thesis 3.6.2): Mpptest's rate / IMB's Mbytes/sec at 1 MiB (holds at 1
  or above);
- the barrier before each call matters only for small messages (thesis
  3.3): the barrier exit skew in OSU's per-rank times, as a share of its
  number, at 8 B against 1 MiB (holds when smaller at 1 MiB);
- fresh memory every repetition costs time for large messages (thesis 4.2,
  SKaMPI's cache avoidance): the cycling reference / the warm one at 1 MiB
  (holds at 1 or above);
- a rotating root (thesis 3.9, Mpptest's and PMB's bcast): reported, not
  judged: on a cluster the thesis found it to matter little.

To reproduce (a minute or two on 2 ranks):

    .venv/bin/python bench/methods_thesis_checks.py --np 2 --json thesis-checks.json
"""

import json
import sys
import tempfile
from pathlib import Path

import numpy as np

import benchjson
from mpiscope.common.sizes import format_size
from mpiscope.methods.reference import call_times
from mpiscope.methods.result import methods_of_run
from mpiscope.methods.skampi import trimmed
from mpiscope.methods.stored import LATE, TOO_LONG, load_series
from mpiscope.store.ingest import load
from peer_tools import run

BENCHES = ("pingpong", "bw", "barrier", "bcast", "allreduce", "alltoall")
SIZES = (8, 1024, 65536, 1048576)


def _tool(rows, bench, size, method):
    for r in rows:
        if (r.bench, r.size) == (bench, size):
            for a in r.tools:
                if a.derivation.series.method == method:
                    return r, a
    return None, None


def checks(run_dir):
    table, run = load(run_dir)
    series = {(s.method, s.bench, s.size): s for s in load_series(run_dir, run) if s.launch == 0}
    rows = methods_of_run(run_dir, table, run).rows
    q = {k: float(np.median(call_times(s))) for k, s in series.items() if k[0].startswith("ref_")}
    out = []

    def add(check, thesis, bench, size, value, holds):
        out.append([check, thesis, bench, format_size(size), float(value), None if holds is None else bool(holds)])

    for bench in ("barrier", "bcast", "allreduce", "alltoall"):
        size = 0 if bench == "barrier" else SIZES[0]
        r, _ = _tool(rows, bench, size, "osu")
        b2b = q.get(("ref_b2b", bench, size))
        if r and b2b:
            ratio = b2b / r.median
            add("back to back / synchronized", "3.8", bench, size, ratio, ratio < 1)
    for size in SIZES:
        s = series.get(("mpibench", "bcast", size))
        if s:
            g = s.grid()
            ratio = g.durations[g.row(0)].mean() / g.durations.max(axis=0).mean()
            add("root / slowest rank (bcast)", "4.4", "bcast", size, ratio, ratio < 1)
    for bench in ("bcast", "allreduce", "alltoall"):
        for size in SIZES:
            s = series.get(("skampi", bench, size))
            if s:
                g = s.grid()
                d = g.durations[:, ~np.any(g.flags & (LATE | TOO_LONG), axis=0)]
                mid = trimmed(d.max(axis=0))
                ratio = d.max(axis=0)[mid].mean() / d[:, mid].mean(axis=1).max()
                add("SKaMPI mean of maxima / largest rank mean", "3.9", bench, size, ratio, ratio >= 1)
    _, mp = _tool(rows, "bw", SIZES[-1], "mpptest")
    _, ib = _tool(rows, "bw", SIZES[-1], "imb")
    if mp and ib:
        ratio = mp.derivation.number / ib.derivation.number
        add("Mpptest bandwidth / IMB bandwidth", "3.6.2", "bw", SIZES[-1], ratio, ratio >= 1)
    for bench in ("bcast", "allreduce", "alltoall"):
        shares = []
        for size in (SIZES[0], SIZES[-1]):
            _, a = _tool(rows, bench, size, "osu")
            skew = [t.value for t in a.terms if t.cause == "barrier"][:1] if a else []
            shares.append(abs(skew[0]) / a.derivation.number if skew else None)
        if None not in shares:
            add("barrier skew share at 1 MiB / at 8 B", "3.3", bench, SIZES[-1], shares[1] / shares[0],
                shares[1] < shares[0])
    for bench in ("bcast", "allreduce", "alltoall"):
        cyc, warm = q.get(("ref_cycle", bench, SIZES[-1])), q.get(("ref_barrier", bench, SIZES[-1]))
        if cyc and warm:
            add("fresh memory / warm buffers", "4.2", bench, SIZES[-1], cyc / warm, cyc / warm >= 1)
    for size in SIZES:
        rot, b2b = q.get(("ref_rotate", "bcast", size)), q.get(("ref_b2b", "bcast", size))
        if rot and b2b:
            add("rotating root / root 0 (bcast, back to back)", "3.9", "bcast", size, rot / b2b, None)
    return out


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument("--np", type=int, default=2, help="ranks (default %(default)s)")
    args = benchjson.parse(ap)
    if args.np < 2:
        ap.error(f"--np must be at least 2, got {args.np}")
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "mpiscope.cli"]
        doc = json.loads(run([*cmd, "run", "-n", str(args.np), "--mpi", "openmpi", "--bench", ",".join(BENCHES),
                              "--sizes", ",".join(map(str, SIZES)), "--methods", "all", "--time-budget", "0.5",
                              "--json", "--out", tmp]))
        rows = checks(Path(doc["run_dir"]))
    columns = ["check", "thesis section", "operation", "size", "measured", "holds"]
    tables = [benchjson.show(f"Hamid (2008)'s observations on {args.np} Open MPI ranks", columns, rows,
                             ["measured: the ratio the check names; holds: whether the thesis's direction "
                              "shows here (rotating root: reported only)"])]
    benchjson.write(args, "methods_thesis_checks", tables, {"rows": benchjson.records(tables[0])},
                    mpi=benchjson.mpi_names("mpicc.openmpi"))


if __name__ == "__main__":
    main()
