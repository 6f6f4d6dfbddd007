"""What the global clock costs and how well it recovers, tree against star.

For each rank count, runs one short job per method (`--clock-sync tree` and
`star`) with injected offsets and drifts (`--clock-inject 50000:100`), and
prints side by side: the time one synchronization of 10 offset points takes
(rank 0's, from the "after" sync block), and the worst recovery error over
the ranks. The tree needs log2(p) rounds per point, the star p - 1; with
more ranks than CPUs the tree's concurrent pairs also preempt each other,
which is why `auto` picks the star there.

    .venv/bin/python bench/clock_sync_cost.py [--ranks 2,4,8] [--trials 3]
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from mpiscope.store import ingest as store
from mpiscope.store.rawfile import read_raw


def one_job(out_root, np_, method):
    """(sync cost in seconds, worst recovery error in seconds) of one job."""
    cmd = [sys.executable, "-m", "mpiscope.cli", "run", "-n", str(np_), "--bench", "barrier",
           "--reps-max", "50", "--clock-sync", method, "--clock-inject", "50000:100", "--json",
           "--out", str(out_root)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    run = Path(json.loads(out.stdout)["run_dir"])
    _, ctx = store.load(run)
    assert ctx["clock_sync"] == method, ctx["clock_sync"]
    worst = max(max(e["recovery_error_s"].values()) for e in ctx["clock"]["0"].values())
    rank0 = read_raw(next((run / "raw" / "launch-0").glob("rank-0.raw")))
    after = [b.meta for b in rank0.blocks if b.meta.get("kind") == "sync" and b.meta.get("phase") == "after"]
    return after[-1]["cost_s"], worst


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ranks", default="2,4,8", help="comma list of rank counts (default 2,4,8)")
    ap.add_argument("--trials", type=int, default=3)
    args = ap.parse_args()
    try:
        counts = [int(x) for x in args.ranks.split(",")]
    except ValueError:
        ap.error(f"--ranks expects a comma list of integers, got '{args.ranks}'")
    if any(c < 2 for c in counts) or args.trials < 1:
        ap.error("every rank count must be at least 2 and --trials at least 1")
    print(f"{'ranks':>5} {'star ms':>9} {'tree ms':>9} {'star/tree':>9} {'star err ns':>12} {'tree err ns':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for np_ in counts:
            got = {"star": [], "tree": []}
            for t in range(args.trials):
                for method in got:
                    got[method].append(one_job(Path(tmp), np_, method))
                print(f"  {np_} ranks, trial {t + 1}/{args.trials} done", file=sys.stderr)
            cost = {m: statistics.median(c for c, _ in v) for m, v in got.items()}
            err = {m: statistics.median(e for _, e in v) for m, v in got.items()}
            print(f"{np_:>5} {cost['star'] * 1e3:>9.2f} {cost['tree'] * 1e3:>9.2f} "
                  f"{cost['star'] / cost['tree']:>9.2f} {err['star'] * 1e9:>12.0f} {err['tree'] * 1e9:>12.0f}")


if __name__ == "__main__":
    main()
