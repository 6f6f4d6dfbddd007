# SPDX-License-Identifier: BSD-3-Clause
"""How much does `--trace` add to what our collective algorithms measure?

Runs, alternately (who goes first alternates between trials) and --trials
times, the same collectives x algorithms (allgather ring, bruck and
recursive doubling; allreduce Rabenseifner and recursive doubling; alltoall
pairwise and linear; bcast binomial and pipelined chain) at 8 B, 1 KiB and
64 KiB untraced and traced (`mpiscope run ... --trace`), on --np ranks of
the default MPI, at least --reps-min repetitions (until the CI of the
median is within 1%, at most 0.5 s per series).

The table gives per case the median over the trials of each run's median
(us), the ratio traced / untraced, the trace events per rank (a message's
send or receive end, what the trace records on one rank) and the
difference per event (ns); the last row the geometric mean of the ratios.

To reproduce (about 40 s per trial, three to four minutes with the defaults):

    .venv/bin/python bench/trace_overhead.py --np 2 --trials 5 --reps-min 200 --json trace-overhead.json
"""

import json
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import benchjson
from mpiscope.store import samples
from mpiscope.store import ingest as store
from mpiscope.store import trace
from mpiscope.engine.build import ensure_engine

CASES = {  # bench: algorithms
    "allgather": ("ring", "bruck", "recursive_doubling"),
    "allreduce": ("rabenseifner", "recursive_doubling"),
    "alltoall": ("pairwise", "linear"),
    "bcast": ("binomial", "pipelined_chain"),
}
SIZES = "8,1K,64K"


def one_run(out_root, np_, bench, algos, traced, reps_min):
    cmd = [sys.executable, "-m", "mpiscope.cli", "run", "-n", str(np_), "--bench", bench,
           "--algo", ",".join(algos), "--sizes", SIZES, "--reps-min", str(reps_min),
           "--ci-width", "0.01", "--time-budget", "0.5", "--json", "--out", str(out_root)]
    if traced:
        cmd.append("--trace")
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    run = Path(json.loads(out.stdout)["run_dir"])
    table, _ = store.load(run)
    medians = {}
    for algo in algos:
        for size in sorted(set(table["size"].to_pylist())):
            v = samples.sample_values(table, bench, size, algo=algo).values
            medians[(algo, int(size))] = float(np.median(v)) if len(v) else float("nan")
    events = {}
    if traced:
        t, _ = trace.load_trace(run)
        for algo in algos:
            for size in sorted(set(t["size"].to_pylist())):
                ev = trace.select(t, bench, algo, size, rep=0)
                if ev.num_rows:
                    events[(algo, int(size))] = ev.num_rows / len(set(ev["rank"].to_pylist()))
    return medians, events


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument("--np", type=int, default=2, help="ranks (default %(default)s)")
    ap.add_argument("--trials", type=int, default=5,
                    help="rounds of every case untraced and traced; the medians are printed "
                         "(default %(default)s)")
    ap.add_argument("--reps-min", type=int, default=200,
                    help="repetitions at least per series (`mpiscope run --reps-min`, default %(default)s)")
    args = benchjson.parse(ap)
    if args.trials < 1 or args.np < 2:
        ap.error("--trials must be at least 1 and --np at least 2")
    ensure_engine("openmpi")
    plain, traced, events = {}, {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for t in range(args.trials):
            for bench, algos in CASES.items():
                order = ((False, plain), (True, traced))
                for is_traced, sink in (order if t % 2 == 0 else order[::-1]):  # alternate who goes first
                    med, ev = one_run(Path(tmp), args.np, bench, algos, is_traced, args.reps_min)
                    for key, value in med.items():
                        sink.setdefault((bench, *key), []).append(value)
                    events.update({(bench, *k): v for k, v in ev.items()})
            print(f"trial {t + 1}/{args.trials} done", file=sys.stderr)
    ratios, rows = [], []
    for key in plain:
        # A run whose series reached no valid median gives none: that trial is left out.
        untraced = [v for v in plain[key] if v is not None and math.isfinite(v)]
        with_trace = [v for v in traced.get(key, []) if v is not None and math.isfinite(v)]
        if not untraced or not with_trace:
            rows.append([f"{key[0]}/{key[1]}", key[2], None, None, None, events.get(key), None])
            continue
        a, b = statistics.median(untraced), statistics.median(with_trace)
        n = events.get(key)
        per = (b - a) / n * 1e9 if n else None
        ratios.append(b / a)
        rows.append([f"{key[0]}/{key[1]}", key[2], a * 1e6, b * 1e6, b / a, n, per])
    gmean = float(np.exp(np.mean(np.log(ratios)))) if ratios else None
    rows.append(["geometric mean of the ratios", None, None, None, gmean, None, None])
    t = benchjson.show(f"{args.np} ranks, median over {args.trials} alternating trials of each run's median",
                       ["bench/algo", "size B", "untraced us", "traced us", "traced / untraced",
                        "events/rank", "ns/event"], rows)
    benchjson.write(args, "trace_overhead", [t],
                    {"cases": benchjson.records(t)[:-1], "geometric_mean_ratio": gmean,
                     "per_trial_s": [{"bench": k[0], "algo": k[1], "size": k[2], "untraced": plain[k],
                                      "traced": traced.get(k, [])} for k in plain]},
                    mpi=benchjson.default_mpi())


if __name__ == "__main__":
    main()
