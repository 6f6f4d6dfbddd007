# SPDX-License-Identifier: BSD-3-Clause
"""Do window starts survive a busy node?

Each trial measures pingpong at 1 B - 64 KiB on 2 ranks of the default MPI
(bound to cores) six ways, one after another: window starts, barrier starts
and the two taking turns in one run (16 repetitions each,
MPISCOPE_TEST_SYNC_ALTERNATE) on a quiet machine, then the same three while
a CPU hog (a busy shell loop) runs on --hog-core, the core of rank 1.
--lock FILE holds an flock on FILE around each trial (hog included), so that
MPI jobs which take the same lock never run beside it.

The first table gives per way, as medians over the trials, the share of
invalid samples and why they were invalid (the rank arrived after the
agreed start, or was preempted while waiting), how many series fell back to
barrier starts, and in how many trials the medians from 2 KiB to 16 KiB rise
with the size. The second gives the pingpong medians per size and way (us,
medians over the trials) and three ratios: loaded / quiet for window
starts, the same for barrier starts, and loaded window / loaded barrier,
which separates what the start scheme adds from what the busy core costs
any scheme. The third compares the schemes like with like: window / barrier
medians of the runs in which they take turns, per trial, then the median over
the trials; a machine whose speed changes from one second to the next moves
both alike there, as it does not two runs. The fourth gives the largest of
each ratio over the sizes. Targets: invalid share <= 10%, medians within 10%
of the quiet run (largest ratio <= 1.1), window within 3% of barrier starts
under the same load, monotone from 2 KiB to 16 KiB.

To reproduce (a few seconds per way, about a minute with the defaults):

    .venv/bin/python bench/start_sync_noise.py --trials 3 --hog-core 1 --json start-sync-noise.json
"""

import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow.compute as pc

import benchjson
from mpiscope.engine.build import ensure_engine
from mpiscope.store import ingest, samples

SIZES = [2**k for k in range(17)]  # 1 B .. 64 KiB
MONOTONE = [s for s in SIZES if 2048 <= s <= 16384]
TURN = 16  # repetitions of one scheme before the other takes its turn
TARGET_TURNS = 0.03


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


def launch(out_root, sync, env=None):
    """(samples table, run) of one pingpong run over SIZES."""
    cmd = [
        sys.executable,
        "-m",
        "mpiscope.cli",
        "run",
        "-n",
        "2",
        "--bench",
        "pingpong",
        "--sizes",
        "1-64K:x2",
        "--sync",
        sync,
        "--json",
        "--out",
        str(out_root),
    ]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    return ingest.load(json.loads(out.stdout)["run_dir"])


def median_us(values):
    return float(np.median(values)) * 1e6 if len(values) else float("nan")


def measure(out_root, sync):
    """{size: median µs}, invalid share, late-start reasons and fallbacks of one run."""
    table, run = launch(out_root, sync)
    medians, n_valid, n_invalid = {}, 0, 0
    for size in SIZES:
        s = samples.sample_values(table, "pingpong", size, run=run)
        medians[size] = median_us(s.values)
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


def window_reps(table, size):
    """Repetitions of `size` that started in a window (a scheduled start)."""
    rows = table.filter(pc.and_(pc.equal(table["size"], size), pc.equal(table["rank"], 0)))
    return rows["rep"].to_numpy()[np.isfinite(rows["t_sched"].to_numpy())]


def measure_turns(out_root):
    """{size: [window median µs, barrier median µs]} of one run in which the two take turns."""
    env = dict(os.environ, MPISCOPE_TEST_SYNC_ALTERNATE=str(TURN))
    table, run = launch(out_root, "window", env)
    medians = {}
    for size in SIZES:
        s = samples.sample_values(table, "pingpong", size, run=run)
        window = np.isin(s.rep, window_reps(table, size))
        medians[size] = [median_us(s.values[window]), median_us(s.values[~window])]
    return medians


def monotone(medians):
    values = [medians[s] for s in MONOTONE]
    return all(b >= a for a, b in zip(values, values[1:]))


def trial(t, args, ways, results, turns, out_root):
    """The six ways once, under --lock."""
    with benchjson.held(args.lock):
        for way in ways:
            with hog(way[1]):
                results[way].append(measure(out_root, way[2]))
            m, share, late, fb = results[way][-1]
            print(
                f"trial {t + 1}/{args.trials} {way[0]:>5} {way[2]:<7}: invalid {share:6.1%} "
                f"(arrived late {late['arrived']}, preempted in the wait {late['left']}), "
                f"fallbacks {fb}, 8 B {m[8]:.2f} us, 4 KiB {m[4096]:.2f} us",
                file=sys.stderr,
            )
        for load, core in (("quiet", None), ("hog", args.hog_core)):
            with hog(core):
                turns[load].append(measure_turns(out_root))
            w, b = turns[load][-1][8]
            print(
                f"trial {t + 1}/{args.trials} {load:>5} turns  : 8 B window {w:.2f} us, barrier {b:.2f} us",
                file=sys.stderr,
            )


def turns_table(turns, trials):
    """Window / barrier of the runs in which they take turns, median of the trials' ratios."""
    rows, worst = [], {}
    for size in SIZES:
        row = [size]
        for load, runs in turns.items():
            # a trial without a valid window start at this size has no ratio
            pairs = [r[size] for r in runs if np.isfinite(r[size][0])] or [(float("nan"), float("nan"))]
            ratios = [w / b for w, b in pairs]
            row += [
                statistics.median(w for w, _ in pairs),
                statistics.median(b for _, b in pairs),
                statistics.median(ratios),
                min(ratios),
                max(ratios),
            ]
            worst[load] = max(worst.get(load, 0), abs(statistics.median(ratios) - 1))
        rows.append(row)
    columns = ["size B"]
    for load in turns:
        columns += [
            f"{load} window us",
            f"{load} barrier us",
            f"{load} window / barrier",
            f"{load} lowest trial",
            f"{load} highest trial",
        ]
    return benchjson.show(
        f"window and barrier starts taking turns ({TURN} repetitions each) in one run, median over {trials} trials",
        columns,
        rows,
        [f"target: window / barrier within {TARGET_TURNS:.0%} of 1 under the same load"],
    ), worst


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument(
        "--trials", type=int, default=3, help="rounds of the six ways; the medians are printed (default %(default)s)"
    )
    ap.add_argument(
        "--hog-core", type=int, default=1, help="core the CPU hog is pinned to: rank 1's (default %(default)s)"
    )
    ap.add_argument(
        "--lock",
        type=Path,
        metavar="FILE",
        help="hold an flock on FILE around each trial (a machine other MPI jobs use)",
    )
    args = benchjson.parse(ap)
    if args.trials < 1:
        ap.error(f"--trials must be at least 1, got {args.trials}")
    ensure_engine("openmpi")
    ways = [
        ("quiet", None, "window"),
        ("quiet", None, "barrier"),
        ("hog", args.hog_core, "window"),
        ("hog", args.hog_core, "barrier"),
    ]
    results = {way: [] for way in ways}
    turns = {"quiet": [], "hog": []}
    with tempfile.TemporaryDirectory() as tmp:
        for t in range(args.trials):
            trial(t, args, ways, results, turns, Path(tmp))

    m = statistics.median
    tables = [
        benchjson.show(
            f"start schemes, quiet and with a CPU hog on core {args.hog_core}, median over {args.trials} trials",
            [
                "way",
                "invalid %",
                "arrived late",
                "preempted in the wait",
                "fallbacks to barrier",
                "trials monotone 2-16 KiB",
                "trials",
            ],
            [
                [
                    f"{load} {sync}",
                    100 * m(r[1] for r in rows),
                    m(r[2]["arrived"] for r in rows),
                    m(r[2]["left"] for r in rows),
                    m(r[3] for r in rows),
                    sum(monotone(r[0]) for r in rows),
                    len(rows),
                ]
                for (load, _, sync), rows in results.items()
            ],
            ["target: invalid share <= 10%, monotone in every trial"],
        )
    ]
    med = {way: {s: m(r[0][s] for r in rows) for s in SIZES} for way, rows in results.items()}
    worst, size_rows = {}, []
    for size in SIZES:
        ratios = [
            med[ways[2]][size] / med[ways[0]][size],
            med[ways[3]][size] / med[ways[1]][size],
            med[ways[2]][size] / med[ways[3]][size],
        ]
        for k, r in enumerate(ratios):
            worst[k] = max(worst.get(k, 0), r)
        size_rows.append([size, *(med[w][size] for w in ways), *ratios])
    tables.append(
        benchjson.show(
            f"median pingpong, separate runs, median over {args.trials} trials",
            [
                "size B",
                *(f"{load} {sync} us" for load, _, sync in ways),
                "hog / quiet, window",
                "hog / quiet, barrier",
                "hog window / hog barrier",
            ],
            size_rows,
        )
    )
    turns_tab, turns_worst = turns_table(turns, args.trials)
    tables.append(turns_tab)
    tables.append(
        benchjson.show(
            "largest ratio over the sizes",
            ["ratio", "largest"],
            [
                ["hog / quiet, window starts", worst[0]],
                ["hog / quiet, barrier starts", worst[1]],
                ["hog window / hog barrier, separate runs", worst[2]],
                *(
                    [f"{load}: window / barrier taking turns, largest distance from 1", turns_worst[load]]
                    for load in turns
                ),
            ],
            [f"target: hog / quiet <= 1.1; window / barrier taking turns within {TARGET_TURNS:.0%} of 1"],
        )
    )
    benchjson.write(
        args,
        "start_sync_noise",
        tables,
        {
            **{
                f"{load} {sync}": [
                    {"medians_us": r[0], "invalid_share": r[1], "late": r[2], "fallbacks": r[3]} for r in rows
                ]
                for (load, _, sync), rows in results.items()
            },
            **{
                f"{load} taking turns": [{"window_barrier_medians_us": r} for r in runs] for load, runs in turns.items()
            },
        },
        mpi=benchjson.default_mpi(),
    )


if __name__ == "__main__":
    main()
