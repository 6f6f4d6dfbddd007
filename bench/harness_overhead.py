# SPDX-License-Identifier: BSD-3-Clause
"""Does the engine's harness add anything to what it measures?

Each trial is one engine job per start synchronization (window, barrier) that
measures, side by side on the same 2 Open MPI ranks (at least 20000
repetitions, until the 95% CI of the median is within 0.5%):
  empty          nothing between a repetition's two timer reads: the
                 engine's own per-sample overhead (window job only);
  pingpong       8 bytes, every round trip timed on its own;
  pingpong_loop  the minimal hand-written loop in the same job: 64 round
                 trips back to back, timed as a whole (as osu_latency).
A standalone minimal loop (bench/minimal_pingpong.c, --iters round trips in
its own job) checks that the in-engine loop is the plain thing.

The tables give, as medians over the trials: the cost of reading each timer
and its resolution (from the run's context); the calibrated timer interval
and tick; the 8-byte times in microseconds (half round trips); and the
ratio pingpong / pingpong_loop per start scheme, raw, with the calibrated
timer interval (which every timed round trip contains once) taken off, and
with that median also interpolated within its tick. A timer whose readings
move in ticks (AMD EPYC's TSC: 10 ns) makes every round trip a multiple of
the tick, so the plain median of the half round trips is a multiple of half
a tick; the interpolated median (interpolated_median) is not.
Target: the ratio with the interval removed <= 1.02.

To reproduce (about 20 s per trial, two minutes with the defaults):

    .venv/bin/python bench/harness_overhead.py --trials 5 --iters 100000 --json harness-overhead.json
"""

import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import benchjson
from mpiscope.measure import launch
from mpiscope.store import samples
from mpiscope.store import ingest as store
from mpiscope.engine.build import REPO, ensure_engine


def build_minimal():
    out = REPO / "build" / "bench" / "minimal_pingpong"
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mpicc.openmpi", "-O2", "-o", str(out), str(REPO / "bench" / "minimal_pingpong.c")],
                   check=True)
    return out


def minimal_us(binary, iters):
    cmd = ["mpirun.openmpi", "-n", "2", "--bind-to", "core", str(binary), str(iters)]
    out = subprocess.run(cmd, env=launch.launch_env("openmpi"), capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def interpolated_median(values, step):
    """The median of readings that are multiples of `step` apart (a timer's
    tick), interpolated within the step that holds it as for grouped data:
    the plain median of such readings is one of the steps, off by up to half
    of one (5 ns a round trip with a 10 ns tick, 2-4% of an 8-byte ping-pong
    of 0.1-0.2 us) against the loop's mean, which is not quantized."""
    values = np.sort(np.asarray(values))
    if step <= 0 or len(values) == 0:
        return float(np.median(values))
    m = float(np.median(values))
    bin_of = np.abs(values - m) <= step / 2 * (1 - 1e-6)  # the readings equal to the median's step
    below = np.count_nonzero(values < m - step / 2 * (1 - 1e-6))
    return m - step / 2 + (len(values) / 2 - below) / np.count_nonzero(bin_of) * step


def tick_of(half_round_trips):
    """For engines that did not record timer.tick_s: twice the smallest gap
    between distinct half round trips (gaps under 0.5 ns are the rounding of
    seconds as doubles), 0 if they are not quantized."""
    x = np.asarray(half_round_trips)
    lo, hi = np.percentile(x, [5, 95])  # the body: a few steps, not the tail's thousands
    gaps = np.diff(np.unique(x[(x >= lo) & (x <= hi)]))
    gaps = gaps[gaps > 0.5e-9]
    if len(gaps) < 5:
        return 0.0
    step = float(gaps.min())
    return 2 * step if np.all(np.abs(gaps - np.round(gaps / step) * step) < 0.5e-9) else 0.0


def engine_job(out_root, sync, benches):
    """One engine job: {bench: median µs}, and the run's context."""
    cmd = [sys.executable, "-m", "mpiscope.cli", "run", "-n", "2", "--bench", ",".join(benches),
           "--sizes", "8", "--sync", sync, "--reps-min", "20000", "--ci-width", "0.005", "--json",
           "--out", str(out_root)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    table, run = store.load(json.loads(out.stdout)["run_dir"])
    medians = {}
    for bench in benches:
        size = 0 if bench == "empty" else 8
        medians[bench] = float(np.median(samples.sample_values(table, bench, size, run=run).values)) * 1e6
    pingpong = samples.sample_values(table, "pingpong", 8, run=run, remove_timer=True).values
    medians["pingpong, timer removed"] = float(np.median(pingpong)) * 1e6
    # a half round trip moves by half a tick
    tick = float((run.timer or {}).get("tick_s") or 0.0) or tick_of(pingpong)
    medians["pingpong, timer removed, interpolated"] = interpolated_median(pingpong, tick / 2) * 1e6
    return medians, run.context


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument("--trials", type=int, default=5,
                    help="trials (two engine jobs and the standalone loop each); the medians over "
                         "them are printed (default %(default)s)")
    ap.add_argument("--iters", type=int, default=100000,
                    help="round trips of the standalone loop (default %(default)s)")
    args = benchjson.parse(ap)
    if args.trials < 1:
        ap.error(f"--trials must be at least 1, got {args.trials}")
    ensure_engine("openmpi")
    binary = build_minimal()
    timers, rows = {}, {}

    def keep(name, value):
        rows.setdefault(name, []).append(value)

    with tempfile.TemporaryDirectory() as tmp:
        for t in range(args.trials):
            for sync in ("window", "barrier"):
                benches = ("empty", "pingpong", "pingpong_loop") if sync == "window" else ("pingpong", "pingpong_loop")
                m, context = engine_job(Path(tmp), sync, benches)
                for name, timer in context["timers"].items():
                    timers.setdefault(name, []).append((timer["cost_s"], timer["resolution_s"]))
                keep("timer interval (ns)", context["timer"]["interval_s"] * 1e9)
                keep("timer tick (ns)", (context["timer"].get("tick_s") or 0.0) * 1e9)
                if "empty" in m:
                    keep("empty operation (per sample)", m["empty"])
                keep(f"pingpong, {sync} sync", m["pingpong"])
                keep(f"pingpong_loop, {sync} sync job", m["pingpong_loop"])
                keep(f"ratio pingpong / loop, {sync}", m["pingpong"] / m["pingpong_loop"])
                keep(f"ratio (timer removed) / loop, {sync}", m["pingpong, timer removed"] / m["pingpong_loop"])
                keep(f"ratio (removed, interp.) / loop, {sync}",
                     m["pingpong, timer removed, interpolated"] / m["pingpong_loop"])
            keep("standalone minimal loop", minimal_us(binary, args.iters))
            print(f"trial {t + 1}/{args.trials}: " + ", ".join(f"{k} {v[-1]:.3f}" for k, v in rows.items()),
                  file=sys.stderr)

    m = statistics.median
    tables = [benchjson.show("timers, median over the trials", ["timer", "read ns", "resolution ns"],
                             [[name, m(c for c, _ in v) * 1e9, m(r for _, r in v) * 1e9]
                              for name, v in timers.items()]),
              benchjson.show("the calibrated timer, median over the trials", ["interval ns", "tick ns"],
                             [[m(rows["timer interval (ns)"]), m(rows["timer tick (ns)"])]])]
    times = ["empty operation (per sample)", "pingpong, window sync", "pingpong_loop, window sync job",
             "pingpong, barrier sync", "pingpong_loop, barrier sync job", "standalone minimal loop"]
    tables.append(benchjson.show(f"8 bytes, median over {args.trials} trials", ["measured", "median us"],
                                 [[name, m(rows[name])] for name in times]))
    tables.append(benchjson.show(
        f"ratio pingpong / pingpong_loop, median over {args.trials} trials",
        ["start sync", "raw", "timer interval removed", "removed, median interpolated"],
        [[sync, m(rows[f"ratio pingpong / loop, {sync}"]), m(rows[f"ratio (timer removed) / loop, {sync}"]),
          m(rows[f"ratio (removed, interp.) / loop, {sync}"])] for sync in ("window", "barrier")],
        ["target: the ratio with the timer interval removed <= 1.02"]))
    benchjson.write(args, "harness_overhead", tables,
                    {"per_trial": rows, "timers": {name: [{"cost_s": c, "resolution_s": r} for c, r in v]
                                                   for name, v in timers.items()}},
                    mpi=benchjson.mpi_names("mpicc.openmpi"))


if __name__ == "__main__":
    main()
