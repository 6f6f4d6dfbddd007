# SPDX-License-Identifier: BSD-3-Clause
"""What the global clock costs and how well it recovers, tree against star.

For each rank count and trial, runs one short `mpiscope run` job (a barrier,
at most 50 repetitions, the default MPI) per synchronization method
(`--clock-sync star` and `tree`) with injected clock offsets and drifts
(`--clock-inject 50000:100`), and reads from the stored run the time one
synchronization of 10 offset points took (rank 0's, from the "after" sync
block) and the worst recovery error of the injected offsets over the ranks.

The table gives per rank count the medians over the trials: each method's
cost in milliseconds, their ratio star / tree, and each method's worst
recovery error in nanoseconds. The tree needs log2(p) rounds per point, the
star p - 1; with more ranks than cores the tree's concurrent pairs also
preempt each other, which is why `--clock-sync auto` picks the star there.

To reproduce (about 2 s per job: 18 jobs with the defaults, under a minute):

    .venv/bin/python bench/clock_sync_cost.py --ranks 2,4,8 --trials 3 --json clock-sync-cost.json
"""

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import benchjson
from mpiscope.store import ingest as store
from mpiscope.store.rawfile import read_raw


def one_job(out_root, np_, method):
    """(sync cost in seconds, worst recovery error in seconds) of one job."""
    cmd = [sys.executable, "-m", "mpiscope.cli", "run", "-n", str(np_), "--bench", "barrier",
           "--reps-max", "50", "--clock-sync", method, "--clock-inject", "50000:100", "--json",
           "--out", str(out_root)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    run = Path(json.loads(out.stdout)["run_dir"])
    ctx = store.load(run)[1].context
    assert ctx["clock_sync"] == method, ctx["clock_sync"]
    worst = max(max(e["recovery_error_s"].values()) for e in ctx["clock"]["0"].values())
    rank0 = read_raw(next((run / "raw" / "launch-0").glob("rank-0.raw")))
    after = [b.meta for b in rank0.blocks if b.meta.get("kind") == "sync" and b.meta.get("phase") == "after"]
    return after[-1]["cost_s"], worst


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument("--ranks", default="2,4,8", help="comma list of rank counts (default 2,4,8)")
    ap.add_argument("--trials", type=int, default=3,
                    help="jobs per method and rank count; the medians are printed (default 3)")
    args = benchjson.parse(ap)
    try:
        counts = [int(x) for x in args.ranks.split(",")]
    except ValueError:
        ap.error(f"--ranks expects a comma list of integers, got '{args.ranks}'")
    if any(c < 2 for c in counts) or args.trials < 1:
        ap.error("every rank count must be at least 2 and --trials at least 1")
    rows, results = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for np_ in counts:
            got = {"star": [], "tree": []}
            for t in range(args.trials):
                for method in got:
                    got[method].append(one_job(Path(tmp), np_, method))
                print(f"  {np_} ranks, trial {t + 1}/{args.trials} done", file=sys.stderr)
            cost = {m: statistics.median(c for c, _ in v) for m, v in got.items()}
            err = {m: statistics.median(e for _, e in v) for m, v in got.items()}
            results[np_] = {m: [{"cost_s": c, "worst_error_s": e} for c, e in v] for m, v in got.items()}
            rows.append([np_, cost["star"] * 1e3, cost["tree"] * 1e3, cost["star"] / cost["tree"],
                         err["star"] * 1e9, err["tree"] * 1e9])
    t = benchjson.show(f"one clock synchronization (10 offset points), median over {args.trials} trials",
                       ["ranks", "star ms", "tree ms", "star / tree", "star worst error ns",
                        "tree worst error ns"], rows)
    benchjson.write(args, "clock_sync_cost", [t], {"trials": results}, mpi=benchjson.default_mpi())


if __name__ == "__main__":
    main()
