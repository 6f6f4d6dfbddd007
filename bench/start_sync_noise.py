# SPDX-License-Identifier: BSD-3-Clause
"""Do window starts survive a busy node?

Each trial measures pingpong at 1 B - 64 KiB on 2 ranks of the default MPI
(bound to cores) four ways, one after another: window and barrier starts on
a quiet machine, then the same two while a CPU hog (a busy shell loop) runs
on --hog-core, the core of rank 1.

The first table gives per way, as medians over the trials, the share of
invalid samples and why they were invalid (the rank arrived after the
agreed start, or was preempted while waiting), how many series fell back to
barrier starts, and in how many trials the medians from 2 KiB to 16 KiB rise
with the size. The second gives the pingpong medians per size and way (us,
medians over the trials) and three ratios: loaded / quiet for window
starts, the same for barrier starts, and loaded window / loaded barrier,
which separates what the start scheme adds from what the busy core costs
any scheme. The third gives the largest of each ratio over the sizes.
Targets: invalid share <= 10%, medians within 10% of the quiet run (largest
ratio <= 1.1), monotone from 2 KiB to 16 KiB.

To reproduce (about 10 s per way, two to three minutes with the defaults):

    .venv/bin/python bench/start_sync_noise.py --trials 3 --hog-core 1 --json start-sync-noise.json
"""

import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import benchjson
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
    ap = benchjson.parser(__doc__)
    ap.add_argument("--trials", type=int, default=3,
                    help="rounds of the four ways; the medians are printed (default %(default)s)")
    ap.add_argument("--hog-core", type=int, default=1,
                    help="core the CPU hog is pinned to: rank 1's (default %(default)s)")
    args = benchjson.parse(ap)
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

    m = statistics.median
    tables = [benchjson.show(
        f"start schemes, quiet and with a CPU hog on core {args.hog_core}, median over {args.trials} trials",
        ["way", "invalid %", "arrived late", "preempted in the wait", "fallbacks to barrier",
         "trials monotone 2-16 KiB", "trials"],
        [[f"{load} {sync}", 100 * m(r[1] for r in rows), m(r[2]["arrived"] for r in rows),
          m(r[2]["left"] for r in rows), m(r[3] for r in rows), sum(monotone(r[0]) for r in rows), len(rows)]
         for (load, _, sync), rows in results.items()],
        ["target: invalid share <= 10%, monotone in every trial"])]
    med = {way: {s: m(r[0][s] for r in rows) for s in SIZES} for way, rows in results.items()}
    worst, size_rows = {}, []
    for size in SIZES:
        ratios = [med[ways[2]][size] / med[ways[0]][size], med[ways[3]][size] / med[ways[1]][size],
                  med[ways[2]][size] / med[ways[3]][size]]
        for k, r in enumerate(ratios):
            worst[k] = max(worst.get(k, 0), r)
        size_rows.append([size, *(med[w][size] for w in ways), *ratios])
    tables.append(benchjson.show(
        f"median pingpong, median over {args.trials} trials",
        ["size B", *(f"{load} {sync} us" for load, _, sync in ways), "hog / quiet, window",
         "hog / quiet, barrier", "hog window / hog barrier"], size_rows))
    tables.append(benchjson.show(
        "largest ratio over the sizes", ["ratio", "largest"],
        [["hog / quiet, window starts", worst[0]], ["hog / quiet, barrier starts", worst[1]],
         ["hog window / hog barrier", worst[2]]], ["target: hog / quiet <= 1.1"]))
    benchjson.write(args, "start_sync_noise", tables,
                    {f"{load} {sync}": [{"medians_us": r[0], "invalid_share": r[1], "late": r[2], "fallbacks": r[3]}
                                        for r in rows]
                     for (load, _, sync), rows in results.items()},
                    mpi=benchjson.default_mpi())


if __name__ == "__main__":
    main()
