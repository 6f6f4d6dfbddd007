"""How much does `--trace` add to what our collective algorithms measure?

Runs, alternately and several times, the same collectives × algorithms ×
sizes untraced and traced (`mpiscope run … --trace`) on the same Open MPI
ranks, and prints per case the median over the trials of each run's
median, the ratio traced / untraced and the difference per traced message
end (a send or a receive, the events the trace records on one rank).

    .venv/bin/python bench/trace_overhead.py [--np 2] [--trials 5]
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

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
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--np", type=int, default=2, help="ranks (default 2: one per core here)")
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--reps-min", type=int, default=200)
    args = ap.parse_args()
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
    print(f"{args.np} ranks, Open MPI; median over {args.trials} alternating trials of each run's median")
    print(f"{'bench/algo':<32} {'size':>6} {'untraced us':>12} {'traced us':>10} {'ratio':>7} "
          f"{'events/rank':>11} {'ns/event':>9}")
    ratios = []
    for key in plain:
        a, b = statistics.median(plain[key]), statistics.median(traced.get(key, [float("nan")]))
        n = events.get(key)
        per = (b - a) / n * 1e9 if n else float("nan")
        ratios.append(b / a)
        print(f"{key[0] + '/' + key[1]:<32} {key[2]:>6} {a * 1e6:>12.3f} {b * 1e6:>10.3f} "
              f"{b / a:>7.3f} {n or float('nan'):>11.0f} {per:>9.1f}")
    print(f"geometric mean of the ratios: {float(np.exp(np.mean(np.log(ratios)))):.3f}")


if __name__ == "__main__":
    main()
