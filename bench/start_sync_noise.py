"""Do window starts survive a busy node?

Each trial measures pingpong at 1 B - 64 KiB on 2 Open MPI ranks (bound to
cores) four ways, one after another: window and barrier starts on a quiet
machine, then the same two while a CPU hog runs on the core of rank 1.
Prints, per way, the share of invalid samples and why they were invalid
(rank arrived after the agreed start, or was preempted while waiting), how
many series fell back to barrier starts, and the pingpong medians; then the
loaded window run against the quiet window run: the largest median ratio
and whether the medians from 2 KiB to 16 KiB rise with the size; and the
loaded window run against the loaded barrier run, which separates what the
start scheme adds from what the busy core costs any scheme.
Targets: invalid share <= 10 %, medians within 10 % of the quiet run,
monotone from 2 KiB to 16 KiB.

    .venv/bin/python bench/start_sync_noise.py [--trials 3] [--hog-core 1]
"""

import argparse
import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from mpiscope.engine.build import ensure_engine
from mpiscope.store import ingest, samples

SIZES = [2 ** k for k in range(17)]  # 1 B .. 64 KiB
MONOTONE = [s for s in SIZES if 2048 <= s <= 16384]


@contextlib.contextmanager
def hog(core):
    """A busy loop pinned to one core for as long as the block runs."""
    if core is None:
        yield
        return
    proc = subprocess.Popen(["taskset", "-c", str(core), "sh", "-c", "while :; do :; done"])
    try:
        yield
    finally:
        proc.kill()
        proc.wait()


def measure(out_root, sync):
    """{size: median µs}, invalid share, late-start reasons and fallbacks of one run."""
    cmd = [sys.executable, "-m", "mpiscope.cli", "run", "-n", "2", "--bench", "pingpong",
           "--sizes", "1-64K:x2", "--sync", sync, "--json", "--out", str(out_root)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    table, run = ingest.load(json.loads(out.stdout)["run_dir"])
    medians, n_valid, n_invalid = {}, 0, 0
    for size in SIZES:
        s = samples.sample_values(table, "pingpong", size, run=run)
        medians[size] = float(np.median(s.values)) * 1e6 if len(s) else float("nan")
        n_valid += len(s)
        n_invalid += s.n_invalid
    late = {"arrived": 0, "left": 0}
    fallbacks = 0
    for rec in run.series:
        for key in late:
            late[key] += (rec.late or {}).get(key, 0)
        fallbacks += rec.start == "window,barrier"
    share = n_invalid / max(1, n_valid + n_invalid)
    return medians, share, late, fallbacks


def monotone(medians):
    values = [medians[s] for s in MONOTONE]
    return all(b >= a for a, b in zip(values, values[1:]))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--hog-core", type=int, default=1, help="core the CPU hog is pinned to (rank 1's)")
    args = ap.parse_args()
    if args.trials < 1:
        ap.error(f"--trials must be at least 1, got {args.trials}")
    ensure_engine("openmpi")
    ways = [("quiet", None, "window"), ("quiet", None, "barrier"),
            ("hog", args.hog_core, "window"), ("hog", args.hog_core, "barrier")]
    results = {way: [] for way in ways}
    with tempfile.TemporaryDirectory() as tmp:
        for t in range(args.trials):
            for way in ways:
                with hog(way[1]):
                    results[way].append(measure(Path(tmp), way[2]))
                m, share, late, fb = results[way][-1]
                print(f"trial {t + 1}/{args.trials} {way[0]:>5} {way[2]:<7}: invalid {share:6.1%} "
                      f"(arrived late {late['arrived']}, preempted in the wait {late['left']}), "
                      f"fallbacks {fb}, 8 B {m[8]:.2f} us, 4 KiB {m[4096]:.2f} us", file=sys.stderr)

    print(f"{'way':<16} {'invalid':>8} {'late arr':>9} {'preempt':>8} {'fallback':>9} {'monotone':>9}")
    for (load, _, sync), rows in results.items():
        print(f"{load + ' ' + sync:<16} {statistics.median(r[1] for r in rows):>8.1%} "
              f"{statistics.median(r[2]['arrived'] for r in rows):>9} "
              f"{statistics.median(r[2]['left'] for r in rows):>8} "
              f"{statistics.median(r[3] for r in rows):>9} "
              f"{sum(monotone(r[0]) for r in rows):>5}/{len(rows)}")
    print()
    print("median pingpong (us), median over trials; ratio = hog / quiet, same start scheme; "
          "w/b = hog window / hog barrier")
    print(f"{'size':>6} " + " ".join(f"{load[0] + '-' + sync:>10}" for load, _, sync in ways)
          + f" {'ratio win':>10} {'ratio bar':>10} {'w/b hog':>10}")
    med = {way: {s: statistics.median(r[0][s] for r in rows) for s in SIZES} for way, rows in results.items()}
    worst = {}
    for size in SIZES:
        ratios = [med[ways[2]][size] / med[ways[0]][size], med[ways[3]][size] / med[ways[1]][size],
                  med[ways[2]][size] / med[ways[3]][size]]
        for sync, r in zip(("window", "barrier", "window against barrier, both loaded,"), ratios):
            worst[sync] = max(worst.get(sync, 0), r)
        print(f"{size:>6} " + " ".join(f"{med[w][size]:>10.2f}" for w in ways)
              + "".join(f" {r:>10.2f}" for r in ratios))
    print()
    for sync in ("window", "barrier"):
        print(f"largest hog/quiet median ratio, {sync} starts: {worst[sync]:.2f}")
    print(f"largest hog window / hog barrier median ratio: {worst['window against barrier, both loaded,']:.2f}")


if __name__ == "__main__":
    main()
