# SPDX-License-Identifier: BSD-3-Clause
"""How long does `mpiscope report` take on a big run?

Writes a synthetic run shaped like `mpiscope run --suite full` (every
benchmark of the suite at 1 B - 4 MiB in powers of two, 2 ranks, fewer
repetitions at larger sizes as the stopping rule gives, a 2% slow tail and
1% invalid samples) with the test suite's raw-file writer (tests/rawgen.py),
ingests it, then times the whole command `mpiscope report RUN -o FILE` in a
fresh process each time (imports included: a user waits for them too). The
modes take turns in every trial, so that other work on the machine slows
each alike. No MPI is started.

Modes (--jobs): "default" runs the command as a user would; a number N
passes `--jobs N` (0: every figure drawn in the report's own process, no
worker processes). --baseline DIR adds the mode "baseline": the same
command from another version's source tree, to measure a change against,
e.g. `git archive HEAD src | tar -x -C /tmp/base` before changing anything.

The table gives per mode: series, median and least wall-clock seconds over
--trials, milliseconds per series, median CPU seconds (the command and its
workers), HTML size, the speed-up against the first mode, and whether the
report has the same tables and the same figures as the first mode's (apart
from its "Generated" time). Exit code 0, or 2 for bad input.

To reproduce (several minutes with the defaults; the second line about a minute):

    .venv/bin/python bench/report_speed.py --sizes 23 --reps 1000 --ranks 2 --trials 3 --jobs default,0 --json report-speed.json
    .venv/bin/python bench/report_speed.py --sizes 8 --trials 1
"""

import argparse
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from rawgen import RunBuilder, SeriesSpec, context_for  # noqa: E402

import benchjson  # noqa: E402

from mpiscope.engine.describe import describe  # noqa: E402
from mpiscope.measure.benchmarks import SUITES  # noqa: E402
from mpiscope.store.ingest import ingest  # noqa: E402

RUN_ID = "20240101-000000-big0"
BANDWIDTH = 5e9          # B/s of the synthetic link
BW_WINDOW = 64           # messages per bw/bibw repetition (rawgen's default)
SVG = re.compile(r"<svg.*?</svg>", re.S)


def _modes(text):
    modes = [m.strip() for m in text.split(",") if m.strip()]
    if not modes or any(m != "default" and not m.isdigit() for m in modes) or len(set(modes)) < len(modes):
        raise argparse.ArgumentTypeError(
            f"'{text}' is not a comma list of distinct modes: 'default' and worker counts (e.g. default,0)")
    return modes


def _source_tree(text):
    path = Path(text)
    if not (path / "src" / "mpiscope" / "__init__.py").is_file():
        raise argparse.ArgumentTypeError(f"{path} is not a source tree of mpiscope (no src/mpiscope/__init__.py)")
    return path.resolve()


# ---------------------------------------------------------------- the run

def _times(rng, n, base):
    """n repetition times around `base` seconds: lognormal spread and a 2% tail
    up to 4x, the shapes the report's distributions, tails and modes show."""
    t = base * rng.lognormal(0.0, 0.05, n)
    slow = rng.random(n) < 0.02
    t[slow] *= rng.uniform(1.5, 4.0, slow.sum())
    return t


def _spec(rng, bench, size, reps):
    latency = {"pingpong": 0.5e-6, "oneway": 0.5e-6, "multipair": 0.6e-6}.get(bench, 2e-6)
    late = tuple((1, int(i)) for i in np.flatnonzero(rng.random(reps) < 0.01))  # invalid samples
    if bench in ("bw", "bibw"):
        moved = size * BW_WINDOW * (2 if bench == "bibw" else 1)
        values = moved / _times(rng, reps, latency + moved / BANDWIDTH)   # bandwidth, B/s
    elif bench == "multipair":
        values = list(zip(_times(rng, reps, latency + size / BANDWIDTH),
                          _times(rng, reps, latency + size / BANDWIDTH)))
    else:
        values = _times(rng, reps, latency + size / BANDWIDTH)
    return SeriesSpec(bench, size, list(values), late=late)


def build_run(out_root, n_sizes, max_reps, ranks):
    """Writes and ingests the run; returns (run directory, series, samples)."""
    rng = np.random.default_rng(1)
    run_dir = out_root / RUN_ID
    rb = RunBuilder(run_dir, nranks=ranks)
    benches = SUITES["full"]["bench"]
    known = describe("openmpi").benchmarks
    sizes = [2 ** k for k in range(n_sizes)]
    series = samples = 0
    for bench in benches:
        for size in ([0] if known[bench].sizeless else sizes):
            reps = max(10, round(max_reps / (1 + size / 8192)))
            rb.add(_spec(rng, bench, size, reps))
            series, samples = series + 1, samples + reps
    rb.write()
    ctx = context_for(run_id=RUN_ID, benches=list(benches), sizes=sizes, np=ranks)
    (run_dir / "context.json").write_text(json.dumps(ctx))
    ingest(run_dir, ctx)
    return run_dir, series, samples


# ---------------------------------------------------------------- timing

def time_report(run_dir, mode, html, baseline):
    """(wall seconds, CPU seconds of the command and its workers) of one report."""
    cmd = [sys.executable, "-m", "mpiscope.cli", "report", str(run_dir), "--out", str(run_dir.parent),
           "-o", str(html)]
    env = dict(os.environ)
    if mode == "baseline":
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(baseline / "src"), env.get("PYTHONPATH")]))
    elif mode != "default":
        cmd += ["--jobs", mode]
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    elapsed = time.perf_counter() - start
    if p.returncode != 0:
        sys.exit(f"report ({mode}) failed with exit code {p.returncode}:\n{p.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # workers are waited for, so they count
    return elapsed, after.ru_utime + after.ru_stime - cpu.ru_utime - cpu.ru_stime


def _parts(html):
    """(everything but the figures and the time it was generated, the figures)."""
    text = html.read_text()
    return SVG.sub("<svg/>", re.sub(r"Generated \S+", "", text)), SVG.findall(text)


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument("--sizes", type=benchjson.count(1, 31), default=23,
                    help="sizes per benchmark, 1 B doubling up (default 23: 1 B - 4 MiB, 323 series)")
    ap.add_argument("--reps", type=benchjson.count(10, 1_000_000), default=1000,
                    help="repetitions of a series at the smallest sizes; fewer above 8 KiB (default 1000)")
    ap.add_argument("--ranks", type=benchjson.count(2, 64), default=2, help="ranks of the run (default 2)")
    ap.add_argument("--trials", type=benchjson.count(1, 100), default=3,
                    help="timed reports per mode; the median is printed (default 3)")
    ap.add_argument("--jobs", type=_modes, default=["default", "0"],
                    help="comma list of modes to time: 'default', or N for --jobs N (default: default,0)")
    ap.add_argument("--baseline", metavar="DIR", type=_source_tree,
                    help="also time the report of the mpiscope source tree DIR (mode 'baseline', first)")
    args = benchjson.parse(ap)
    modes = (["baseline"] if args.baseline else []) + args.jobs

    with tempfile.TemporaryDirectory(prefix="report-speed-") as tmp:
        start = time.perf_counter()
        run_dir, series, samples = build_run(Path(tmp), args.sizes, args.reps, args.ranks)
        print(f"synthetic run: {series} series, {samples} samples, {args.ranks} ranks "
              f"(written and ingested in {time.perf_counter() - start:.1f} s)", file=sys.stderr)
        took = {m: [] for m in modes}
        html = {m: Path(tmp) / f"report-{m}.html" for m in modes}
        for trial in range(args.trials):
            for mode in modes:
                took[mode].append(time_report(run_dir, mode, html[mode], args.baseline))
            print(f"  trial {trial + 1}/{args.trials}: "
                  + ", ".join(f"{m} {took[m][-1][0]:.2f} s" for m in modes), file=sys.stderr)

        first = modes[0]
        wall = {m: statistics.median(w for w, _ in took[m]) for m in modes}
        tables, figures = _parts(html[first])
        rows = []
        for mode in modes:
            t, f = _parts(html[mode])
            rows.append([mode, series, wall[mode], min(w for w, _ in took[mode]), 1000 * wall[mode] / series,
                         statistics.median(c for _, c in took[mode]), html[mode].stat().st_size / 1e6,
                         wall[first] / wall[mode], "yes" if t == tables else "NO",
                         "yes" if f == figures else f"{sum(a == b for a, b in zip(f, figures))} of {len(f)} same"])
    table = benchjson.show(
        f"mpiscope report of a synthetic run ({series} series, {samples} samples, {args.ranks} ranks), "
        f"{args.trials} trials", ["mode", "series", "median s", "min s", "ms/series", "CPU s", "HTML MB",
                                  f"speed-up over {first}", f"same tables as {first}",
                                  f"same figures as {first}"], rows)
    benchjson.write(args, "report_speed", [table],
                    {"series": series, "samples": samples,
                     "trials": {m: [{"wall_s": w, "cpu_s": c} for w, c in took[m]] for m in modes}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
