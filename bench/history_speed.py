# SPDX-License-Identifier: BSD-3-Clause
"""How long does `mpiscope history` take over many stored runs?

Writes --runs synthetic nightly runs under a fresh output root, each a
context.json as the runner writes it and a quality.json with the median and
95% interval of every series (--benches × --sizes), spread over --machines
clusters, one run a night per cluster, with a 10% step half-way through
every series and a changed MPI version there. No MPI is started.

Once the files are older than the catalog's window for files just changed
(they would be read again at every call until then), it times the whole
command `mpiscope history OUT` in a fresh process each time (imports
included: a user waits for them too):

- "first": a call that builds the catalog from the directories (the
  catalog removed before each);
- "warm": a call that finds every run unchanged in the catalog;
- "one new run": a call after one more run was written (the catalog reads
  that run alone);
- "warm, --json": a call printing the JSON document, which holds every
  run of every series (the terminal's table shows the newest runs).

Each is timed --trials times. It checks that every series' change point is
found at the injected run, and prints the median and least wall-clock
seconds of each. Exit code 0, or 2 for bad input.

To reproduce (a few minutes, most of it writing the runs):

    .venv/bin/python bench/history_speed.py --runs 10000 --trials 5 --json history-speed.json
    .venv/bin/python bench/history_speed.py --runs 500 --trials 3
"""

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

import benchjson

from mpiscope.store.catalog import RACY_S  # noqa: E402
from mpiscope.store.layout import CATALOG_FILE  # noqa: E402

MPISCOPE = [sys.executable, "-m", "mpiscope.cli"]
START = datetime(2026, 1, 1, 2, 0, 0)
STEP = 0.10


def _words(text):
    words = [w.strip() for w in text.split(",") if w.strip()]
    if not words:
        raise argparse.ArgumentTypeError(f"'{text}' names nothing")
    return words


def _sizes(text):
    try:
        return [int(w) for w in _words(text)]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a comma list of byte counts") from None


def context(run_id, created, cluster, mpi_version):
    """A run context with the fields history reads, as the runner writes them."""
    return {
        "schema_version": 1, "run_id": run_id, "created": created, "status": "completed",
        "kind": "measurement", "benches": ["allreduce", "pingpong"], "np": 32, "mpi": "openmpi",
        "launcher": "srun", "label": None,
        "mpi_identity": {"implementation": "open-mpi", "version": mpi_version,
                         "library": f"Open MPI v{mpi_version}"},
        "plan": {"sync": "window", "timer": "auto", "cache": "hot", "cluster": None},
        "env": {"SLURM_CLUSTER_NAME": cluster, "SLURM_JOB_PARTITION": "batch", "PATH": "/usr/bin",
                "HOME": "/home/user"},
        "hosts": {"n01": 16, "n02": 16}, "writer": {"host": "n01", "pid": 1},
        "machine": {"host": "login1", "kernel": "6.1.0-18-amd64", "cpu_model": "AMD EPYC 7763",
                    "governor": "performance", "mpiscope_version": "0.1.0",
                    "engine_sha256": "00aa11bb22cc33dd",
                    "libraries": {f"lib{i}.so": f"/usr/lib/lib{i}.so.1.{i}" for i in range(30)}},
    }


def write_run(out, i, night, cluster, series, step_at, rng):
    when = START + timedelta(days=night)
    run_id = when.strftime("%Y%m%d-%H%M%S-") + f"{i:06x}"
    run = out / run_id
    run.mkdir()
    stepped = night >= step_at
    (run / "context.json").write_text(json.dumps(
        context(run_id, when.isoformat(), cluster, "4.1.6" if stepped else "4.1.5")))
    entries = []
    for bench, size, base in series:
        # a median known to ±1% (95%) varies from run to run by about 1% / 1.96 (one sd)
        m = base * (1 + rng.normal(0.0, 0.01 / 1.96)) * (1 + STEP if stepped else 1)
        entries.append({"bench": bench, "algo": "mpi", "size": size, "unit": "s", "n": 200,
                        "invalid": 0, "stop": "ci", "ci_reached": True, "ci_halfwidth": 0.01,
                        "start": "window", "flags": [], "details": {}, "median": m,
                        "ci_low": m * 0.99, "ci_high": m * 1.01})
    (run / "quality.json").write_text(json.dumps({"format": "mpiscope-quality", "schema_version": 1,
                                                  "thresholds": {}, "series": entries}))


def timed(out, *options):
    """Wall-clock seconds of one `mpiscope history OUT [options]`, the CPU
    seconds it used (user and system: what other work on the machine does
    not add to), and what it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run([*MPISCOPE, "history", str(out), *options], capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"mpiscope history failed ({done.returncode}): {done.stderr.strip()}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return seconds, cpu, done.stdout


def found_all(doc, step_at) -> bool:
    """Every series has one change point, at the run of the injected step."""
    return all([c["index"] for c in s["changes"]] == [step_at] for s in doc["series"])


def main(argv=None):
    ap = benchjson.parser(__doc__)
    ap.add_argument("--runs", type=benchjson.count(20, 100_000), default=10_000,
                    help="stored runs (default: %(default)s)")
    ap.add_argument("--machines", type=benchjson.count(1, 1000), default=20,
                    help="clusters the runs are spread over (default: %(default)s)")
    ap.add_argument("--benches", type=_words, default=["allreduce", "pingpong"],
                    help="benchmarks of every run (default: allreduce,pingpong)")
    ap.add_argument("--sizes", type=_sizes, default=[8, 65536],
                    help="message sizes of every benchmark (default: 8,65536)")
    ap.add_argument("--trials", type=benchjson.count(1, 100), default=5,
                    help="times each call is timed (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=1)
    args = benchjson.parse(ap, argv)

    rng = np.random.default_rng(args.seed)
    series = [(b, s, 2e-6 + s * 1e-10) for b in args.benches for s in args.sizes]
    nights = -(-args.runs // args.machines)
    step_at = nights // 2
    with tempfile.TemporaryDirectory(prefix="history-speed-") as tmp:
        out = Path(tmp) / "runs"
        out.mkdir()
        t0 = time.perf_counter()
        for i in range(args.runs):
            write_run(out, i, i // args.machines, f"cluster{i % args.machines:03d}", series, step_at, rng)
        written = time.perf_counter() - t0
        print(f"{args.runs} runs of {len(series)} series each over {args.machines} clusters written "
              f"in {written:.1f} s", file=sys.stderr)
        time.sleep(RACY_S + 0.5)   # files younger than this are read again at the next call
        first = []
        for _ in range(args.trials):
            (out / CATALOG_FILE).unlink(missing_ok=True)
            first.append(timed(out)[:2])
        warm = [timed(out)[:2] for _ in range(args.trials)]
        as_json = [timed(out, "--json")[:2] for _ in range(args.trials)]
        one_new = []
        for k in range(args.trials):
            write_run(out, args.runs + k, nights + 1 + k, "cluster000", series, step_at, rng)
            one_new.append(timed(out)[:2])
        doc = json.loads(timed(out, "--json")[2])
        correct = found_all(doc, step_at) and len(doc["series"]) == len(series) * args.machines
        calls = {"first": first, "warm": warm, "one_new_run": one_new, "json": as_json}
        wall = {k: [w for w, _ in v] for k, v in calls.items()}
        cpu = {k: [c for _, c in v] for k, v in calls.items()}
        rows = [[what, f"{statistics.median(wall[k]):.2f}", f"{min(wall[k]):.2f}",
                 f"{statistics.median(cpu[k]):.2f}", len(wall[k])] for what, k in (
            ("first (catalog built)", "first"), ("warm (catalog unchanged)", "warm"),
            ("one new run", "one_new_run"), ("warm, --json (every run of every series)", "json"))]
        table = benchjson.show(
            f"mpiscope history over {args.runs} stored runs ({len(series) * args.machines} series "
            f"of about {nights} runs)", ["call", "median s", "least s", "median CPU s", "trials"], rows,
            notes=[f"every series' change point found at its injected run: {'yes' if correct else 'no'}",
                   "wall-clock seconds of the whole command in a fresh process, imports included; "
                   "CPU s: its user and system time, which other work on the machine does not add to"])
    results = {"runs": args.runs, "series": len(series) * args.machines, "found_all": correct}
    for k in calls:
        results.update({f"{k}_s": wall[k], f"{k}_median_s": statistics.median(wall[k]),
                        f"{k}_cpu_s": cpu[k], f"{k}_cpu_median_s": statistics.median(cpu[k])})
    benchjson.write(args, "history_speed", [table], results=results)
    return 0 if correct else 1


if __name__ == "__main__":
    sys.exit(main())
