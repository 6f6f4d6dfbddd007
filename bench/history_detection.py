# SPDX-License-Identifier: BSD-3-Clause
"""Does `mpiscope history` find the steps it should, and only those?

Series of nightly runs are built by resampling the repetitions of real
stored runs (RUN... given), so that the noise is the measuring machine's,
not a model's: every night of a series picks one of the runs that measured
its benchmark and size, at random, and draws as many repetitions as that
run holds from it with replacement; its median and 95% interval are then
computed as mpiscope computes a run's (order statistics). A series has
--runs nights; in half of the series every repetition from a random night
on (between night 10 and night runs − 10) is slower by a step of 2%, 5% or
10% (a third each). The same series go through

- mpiscope's detector (history/detect.py: PELT candidates, kept when the
  step's interval from the runs' own intervals lies beyond --threshold);
- ruptures' PELT with the L2 cost and the same penalty, without the
  interval test (what the candidates alone would flag);
- Apache Otava's E-divisive means with its defaults, and asv's
  step detection with its defaults (detect_regressions), when
  --anchors-python names a Python that has them (they cannot share
  mpiscope's environment: bench/history_anchors.py runs there).

A step counts as detected when a change point is flagged within 3 nights of
where it was injected; every other flag is a false flag, counted per 100
nights of the series without a step. Steps are slower times, so every
detector's regressions and its steps in either direction are both flags.

--regression ROOT adds the real-regression case: `mpiscope history` over
the runs under ROOT (made by --make-regression: 64 KiB and 1 MiB pingpong on 2 local
ranks, from run --changed-from on with Open MPI's shared-memory single copy
turned off) must flag one change at run --changed-from, naming the changed
setting, and nothing before it.

Exit code 0, or 2 for bad input. CPU-bound: run it alone on the machine.

To reproduce (minutes; the first and third lines make real runs, about 10 s each):

    for i in 1 2 3; do mpiscope run -n 2 --bench allreduce,pingpong --sizes 8,64K,1M --out real; done
    python3 -m venv anchors && anchors/bin/pip install apache-otava asv
    .venv/bin/python bench/history_detection.py --make-regression reg --regression-runs 30 --changed-from 21
    .venv/bin/python bench/history_detection.py real/2* --trials 5 --regression reg \\
        --anchors-python anchors/bin/python --changed-from 21 --json history.json
"""

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

import benchjson

from mpiscope.history.detect import _candidates, change_points  # noqa: E402
from mpiscope.stats.summary import median_ci_ranks  # noqa: E402

STEPS = (0.02, 0.05, 0.10)
WITHIN = 3          # nights between an injected step and its flag
MARGIN = 10         # no step injected in the first or last MARGIN nights
SINGLE_COPY = "OMPI_MCA_btl_vader_single_copy_mechanism"
DETECTORS = ("mpiscope", "PELT alone", "Otava", "asv")
ONE_RUN, ANY_RUN = "one run", "a run a night"   # where a series' nights draw their repetitions


def halfwidth(values) -> float:
    """The relative half-width of the 95% interval of the median of `values`."""
    a = np.sort(values)
    j, k, _ = median_ci_ranks(len(a))
    return float((a[k - 1] - a[j - 1]) / 2 / np.median(a))


def sources(run_paths, widest) -> tuple[dict, list]:
    """{(bench, algo, size, unit): [repetition arrays, one per run]} of the given
    runs, and the keys left out: their runs' median interval is wider than ±`widest`."""
    from mpiscope.common.errors import UsageError
    from mpiscope.store.ingest import load
    from mpiscope.store.series import all_series_samples

    found = {}
    for path in run_paths:
        try:
            table, run = load(path)
        except UsageError as exc:
            sys.exit(f"history_detection: {exc}")
        for bench, algo, size, samples in all_series_samples(table, run):
            values = np.asarray(samples.values, dtype=np.float64)
            values = values[np.isfinite(values)]
            if len(values) >= 20:
                found.setdefault((bench, algo, int(size), samples.unit), []).append(values)
    wide = sorted(k for k, runs in found.items() if np.median([halfwidth(v) for v in runs]) > widest)
    return {k: v for k, v in found.items() if k not in wide}, wide


def night(rng, runs, factor):
    """(median, ci_low, ci_high) of one resampled night."""
    values = runs[rng.integers(len(runs))]
    drawn = np.sort(rng.choice(values, size=len(values), replace=True)) * factor
    j, k, _ = median_ci_ranks(len(drawn))
    return float(np.median(drawn)), float(drawn[j - 1]), float(drawn[k - 1])


def make_series(rng, key, runs, n, step, at, model):
    if model == ONE_RUN:   # every night resamples one stored run's repetitions
        runs = [runs[rng.integers(len(runs))]]
    nights = [night(rng, runs, 1.0 + step if step and i >= at else 1.0) for i in range(n)]
    return {"source": key, "step": step, "at": at, "medians": [x[0] for x in nights],
            "lows": [x[1] for x in nights], "highs": [x[2] for x in nights]}


def build(sourced, n, count, seed, model):
    """`count` series per trial, half with a step, spread over the sources."""
    rng = np.random.default_rng(seed)
    keys = sorted(sourced)
    series = []
    for i in range(count):   # pairs of one source, one series with a step and one without
        pair = i // 2
        key = keys[pair % len(keys)]
        stepped = i % 2 == 1
        step = STEPS[(pair // len(keys)) % len(STEPS)] if stepped else 0.0
        at = int(rng.integers(MARGIN, n - MARGIN + 1)) if stepped else None
        series.append(make_series(rng, key, sourced[key], n, step, at, model))
    return series


def mpiscope_flags(s, threshold):
    unit = s["source"][3]
    return [i for i, _ in change_points(s["medians"], s["lows"], s["highs"], unit, threshold)]


def pelt_flags(s, threshold):
    return _candidates(s["medians"])


def anchor_flags(python, series) -> dict:
    """{detector: [[flags] per series]} from bench/history_anchors.py in another Python."""
    script = Path(__file__).with_name("history_anchors.py")
    done = subprocess.run([python, str(script)], input=json.dumps([s["medians"] for s in series]),
                          capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"history_detection: {script.name} failed: {done.stderr.strip()[-500:]}")
    return json.loads(done.stdout)


def score(series, flags):
    """Per step size: detected / stepped; false flags and the nights they count over."""
    found = {s: [0, 0] for s in STEPS}
    false, quiet_nights = 0, 0
    for s, f in zip(series, flags):
        if s["step"]:
            hit = any(abs(i - s["at"]) <= WITHIN for i in f)
            found[s["step"]][0] += hit
            found[s["step"]][1] += 1
            false += sum(abs(i - s["at"]) > WITHIN for i in f)
        else:
            false += len(f)
            quiet_nights += len(s["medians"])
    return found, false, quiet_nights


def evaluate(sourced, args, model):
    """(table rows, results) of every detector over --trials sets of series."""
    totals = {d: ({s: [0, 0] for s in STEPS}, [0, 0]) for d in DETECTORS}
    ran = set()
    for trial in range(args.trials):
        series = build(sourced, args.n, args.series, trial, model)
        flags = {"mpiscope": [mpiscope_flags(s, args.threshold) for s in series],
                 "PELT alone": [pelt_flags(s, args.threshold) for s in series]}
        if args.anchors_python:
            flags.update(anchor_flags(args.anchors_python, series))
        for name, f in flags.items():
            ran.add(name)
            found, false, quiet = score(series, f)
            for s in STEPS:
                totals[name][0][s][0] += found[s][0]
                totals[name][0][s][1] += found[s][1]
            totals[name][1][0] += false
            totals[name][1][1] += quiet
        print(f"{model}: trial {trial + 1} of {args.trials} done", file=sys.stderr)
    rows, results = [], {}
    for name in DETECTORS:
        if name not in ran:
            rows.append([name, *["skipped"] * (len(STEPS) + 1)])
            continue
        found, (false, quiet) = totals[name]
        shares = {s: found[s][0] / found[s][1] if found[s][1] else math.nan for s in STEPS}
        per100 = 100.0 * false / quiet if quiet else math.nan
        rows.append([name, *[f"{100 * shares[s]:.0f}% ({found[s][0]}/{found[s][1]})" for s in STEPS],
                     f"{per100:.2f}"])
        results[name] = {"detected": {f"{s:g}": shares[s] for s in STEPS},
                         "counts": {f"{s:g}": found[s] for s in STEPS},
                         "false_flags_per_100": per100, "false_flags": false, "quiet_runs": quiet}
    return rows, results


def make_regression(root, runs, changed_from):
    """`runs` runs of 64 KiB and 1 MiB pingpong on 2 local ranks under `root`; from run
    `changed_from` (1-based) on with the shared-memory single copy turned off."""
    mpiscope = Path(sys.executable).with_name("mpiscope")
    for i in range(runs):
        env = dict(os.environ)
        if i + 1 >= changed_from:
            env[SINGLE_COPY] = "none"
        done = subprocess.run([str(mpiscope), "run", "-n", "2", "--bench", "pingpong", "--sizes", "64K,1M",
                               "--out", str(root)], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"history_detection: mpiscope run failed: {done.stderr.strip()[-500:]}")
        print(f"run {i + 1} of {runs} stored", file=sys.stderr)


def regression_case(root, changed_from):
    """(table, results) of `mpiscope history` over the runs under `root`; runs are
    numbered in the order they were made, over the whole root (a series may lack
    a run that measured nothing at its size)."""
    mpiscope = Path(sys.executable).with_name("mpiscope")
    done = subprocess.run([str(mpiscope), "history", str(root), "--json"], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"history_detection: mpiscope history failed: {done.stderr.strip()}")
    doc = json.loads(done.stdout)
    made = sorted({(r["created"], r["run_id"]) for s in doc["series"] for r in s["runs"]})
    number = {run_id: i + 1 for i, (_, run_id) in enumerate(made)}
    rows, results = [], []
    for s in doc["series"]:
        n = len(s["runs"])
        at = [number[c["first_after"]] for c in s["changes"]]
        for c, i in zip(s["changes"], at):
            named = [d["what"] for d in c["changed"]]
            rows.append([s["name"], n, i, f"{100 * c['step']:+.1f}%",
                         f"[{100 * c['step_low']:+.1f}%, {100 * c['step_high']:+.1f}%]",
                         ", ".join(named) or "nothing"])
        results.append({"series": s["name"], "runs": n, "flagged_at": at,
                        "named": [[d["what"] for d in c["changed"]] for c in s["changes"]],
                        "expected_at": changed_from})
        if not s["changes"]:
            rows.append([s["name"], n, "none", "", "", ""])
    return rows, results


def main(argv=None):
    ap = benchjson.parser(__doc__)
    ap.add_argument("runs", nargs="*", metavar="RUN", help="stored run directories to resample")
    ap.add_argument("--runs-per-series", type=benchjson.count(30, 10_000), default=60, dest="n",
                    help="nights of every series (default: %(default)s)")
    ap.add_argument("--series", type=benchjson.count(6, 100_000), default=120,
                    help="series per trial, half with a step (default: %(default)s)")
    ap.add_argument("--trials", type=benchjson.count(1, 1000), default=5,
                    help="trials, each with its own seed (default: %(default)s)")
    ap.add_argument("--threshold", type=float, default=0.02,
                    help="mpiscope's threshold, a fraction (default: %(default)s)")
    ap.add_argument("--widest", type=float, default=0.05,
                    help="leave out benchmark sizes whose runs' median interval is wider than "
                         "this fraction either side (default: %(default)s)")
    ap.add_argument("--anchors-python", metavar="PYTHON",
                    help="a Python with apache-otava and asv installed")
    ap.add_argument("--regression", metavar="ROOT", type=Path,
                    help="an output root made by --make-regression: the real-regression case")
    ap.add_argument("--make-regression", metavar="ROOT", type=Path,
                    help="make the real-regression runs under ROOT (MPI; then exit)")
    ap.add_argument("--regression-runs", type=benchjson.count(6, 1000), default=30,
                    help="runs --make-regression makes (default: %(default)s)")
    ap.add_argument("--changed-from", type=benchjson.count(3, 1000), default=21,
                    help="the first run of the real-regression case with the change, 1-based "
                         "(default: %(default)s)")
    args = benchjson.parse(ap, argv)
    if args.make_regression:
        if args.changed_from > args.regression_runs - 1:
            ap.error(f"--changed-from {args.changed_from} leaves fewer than two of the "
                     f"{args.regression_runs} runs with the change")
        make_regression(args.make_regression, args.regression_runs, args.changed_from)
        return 0
    if not args.runs:
        ap.error("give the stored runs to resample (RUN...)")
    if args.anchors_python and not os.access(args.anchors_python, os.X_OK):
        ap.error(f"--anchors-python {args.anchors_python} is not an executable")
    if args.regression and not args.regression.is_dir():
        ap.error(f"--regression {args.regression} is not a directory")

    sourced, wide = sources(args.runs, args.widest)
    if not sourced:
        ap.error(f"the runs given hold no series with 20 repetitions or more whose interval is "
                 f"within ±{100 * args.widest:g}%")
    tables, out = [], {"sources": [f"{b} {a} {s} B" for b, a, s, _ in sorted(sourced)],
                       "left_out": [f"{b} {a} {s} B" for b, a, s, _ in wide]}
    for model in (ONE_RUN, ANY_RUN):
        rows, out[model] = evaluate(sourced, args, model)
        notes = [f"{args.trials} trials × {args.series} series of {args.n} nights; every night "
                 + ("draws from the one stored run its series was given" if model == ONE_RUN else
                    "draws from one of the stored runs, at random")
                 + f" ({len(args.runs)} stored runs, {len(sourced)} benchmark sizes); steps "
                 f"injected between night {MARGIN} and {args.n - MARGIN}",
                 f"detected: a flag within {WITHIN} nights of the step; mpiscope's threshold "
                 f"{100 * args.threshold:g}%"]
        if wide:
            notes.append(f"left out, their runs' intervals wider than ±{100 * args.widest:g}%: "
                         + ", ".join(f"{b} {s} B" for b, _, s, _ in wide))
        if not args.anchors_python:
            notes.append(benchjson.skipped("Otava and asv", "--anchors-python"))
        tables.append(benchjson.show(f"Steps detected within {WITHIN} nights, and false flags: "
                                     f"nights drawn from {model}",
                                     ["detector", *[f"{100 * s:g}% steps" for s in STEPS],
                                      "false flags / 100 nights"], rows, notes=notes))
    if args.regression:
        reg_rows, reg = regression_case(args.regression, args.changed_from)
        tables.append(benchjson.show(
            f"A real change: {SINGLE_COPY}=none from run {args.changed_from} on",
            ["series", "runs", "flagged at run", "step", "95% interval", "changed"], reg_rows,
            notes=[f"runs under {args.regression.name}: 64 KiB and 1 MiB pingpong on 2 local ranks"]))
        out["regression"] = reg
    benchjson.write(args, "history_detection", tables, results=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
