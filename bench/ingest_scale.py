# SPDX-License-Identifier: BSD-3-Clause
"""Does the analysis keep up with 100 million samples?

A sample is one stored record (a samples.parquet row): one rank's timing of
one repetition, which is what the engine writes and ingest converts.

Writes a synthetic run in the engine's raw format
(docs/reference/formats/raw-files.md) to a temporary directory: 4 ranks
with clock offsets and drifts, 3 launches, pingpong, multipair, allreduce
and alltoall at 23 sizes (1 B - 4 MiB), with repetitions chosen so that the
rows add up to --samples. Then times each stage in a fresh child process,
so that each gets its own peak RSS:

  ingest   raw files -> samples.parquet (store.ingest, as `mpiscope run` does)
  summary  what `mpiscope show` computes and prints (views.show_rows, format_show)

The first table gives per stage the seconds, the CPU seconds (all the stage's
threads), samples per second and peak RSS (generating the raw files is not
part of the target); the second the
verdict: ingest + summary, scaled linearly to 100 M samples when fewer were
asked for, against the target. With --trials N both stages run N times on the
same raw files (ingest, summary, ingest, ...): the tables give each stage's
median and the range of the trials. The raw files were just written, so ingest
reads them from the page cache. No MPI is started.
Target: 100 M samples ingested and summarized in <= 60 s on 2 cores.
Exit code 0 when the target is met, 1 when missed, 2 for bad input.

To reproduce (100 M samples: one to several minutes and about 4.5 GB in the temporary
directory; 2 M samples take seconds):

    .venv/bin/python bench/ingest_scale.py --samples 100M --trials 5 --json ingest-scale.json
    .venv/bin/python bench/ingest_scale.py --samples 2M --profile      # where the time goes
"""

import argparse
import cProfile
import io
import json
import multiprocessing
import os
import pstats
import re
import resource
import struct
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

import benchjson
from mpiscope.store.series import open_run
from mpiscope.views import show as views
from mpiscope.store.rawfile import BLOCK_END, BLOCK_MAGIC, FILE_MAGIC
from mpiscope.store.ingest import ingest

TARGET_SAMPLES = 100_000_000
TARGET_SECONDS = 60.0
NRANKS, LAUNCHES = 4, 3
BENCHES = ("pingpong", "multipair", "allreduce", "alltoall")
SIZES = [2 ** k for k in range(23)]            # 1 B .. 4 MiB, as --sizes 1-4M:x2
PERIOD = 1e-4                                  # seconds between scheduled starts
SMALL = 1e-7                                   # a responder's reaction time
LATE = 1e-3                                    # share of rows that started late (invalid)
# Rank r's clock: global = local - (offset + drift * (local - ref)).
CLOCKS = {r: (0.37 * r, 3e-6 * r, 50.0) for r in range(NRANKS)}


# ---------------------------------------------------------------- input

def count(text):
    """A positive count: 100000000, 1e8, 100M, 5k (decimal units)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d*)?(?:e\d+)?)\s*([kKmMgG]?)\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count (e.g. 100M, 5000000, 1e8)")
    n = int(float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6, "g": 1e9}[m.group(2).lower()])
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: the number of samples must be at least 1")
    return n


def rows_per_rep():
    """Rows one repetition index adds over every series, rank and launch."""
    per = {"pingpong": 2, "multipair": NRANKS, "allreduce": NRANKS, "alltoall": NRANKS}
    return sum(per[b] for b in BENCHES) * len(SIZES) * LAUNCHES


# ---------------------------------------------------------------- synthetic run

def _to_local(g, rank):
    offset, drift, ref = CLOCKS[rank]
    return (g + offset - drift * ref) / (1.0 - drift)


def _values(rng, size, n):
    """Skewed, heavy-tailed times around a Hockney line: 1 us + size / 5 GB/s."""
    base = 1e-6 + size / 5e9
    return base * rng.lognormal(0.0, 0.1, n) + rng.exponential(base * 0.05, n)


def _series_rows(rng, bench, size, sched):
    """{rank: (t_start, t_end) in global time, role, peer} for one series."""
    n = len(sched)
    if bench == "pingpong":
        rtt = 2.0 * _values(rng, size, n)
        return {0: (sched, sched + rtt, "initiator", 1),
                1: (sched + SMALL, sched + rtt - SMALL, "responder", 0)}
    if bench == "multipair":
        rows, half = {}, NRANKS // 2
        for a in range(half):
            b = a + half
            fwd, bwd = _values(rng, size, n), _values(rng, size, n)
            rows[a] = (sched, sched + fwd + SMALL + bwd, "initiator", b)
            rows[b] = (sched + fwd + SMALL, sched + fwd, "responder", a)
        return rows
    return {r: (sched + SMALL * r, sched + _values(rng, size, n), "member", -1)
            for r in range(NRANKS)}


def _block(f, meta, columns=()):
    js = json.dumps(meta).encode()
    nrows = len(columns[0]) if columns else 0
    f.write(BLOCK_MAGIC + struct.pack("<I", len(js)) + js + struct.pack("<Q", nrows))
    for col in columns:
        f.write(np.ascontiguousarray(col).data)   # bulk, no per-row Python
    f.write(BLOCK_END)


def _header(rank, launch):
    return {"schema_version": 1, "rank": rank, "size": NRANKS, "launch": launch,
            "host": "node0", "cpus": str(rank % 2), "mpi_library": "Open MPI v4.1.4 (synthetic)",
            "mpi_version": "3.1",
            "timer": {"name": "tsc", "cost_s": 1.2e-8, "resolution_s": 4e-10, "freq_hz": 2.5e9},
            "sync_method": "window", "cache": "warm", "seed": 1, "inject": None,
            "argv": ["bench/ingest_scale.py"], "start_unix": 1.7e9}


def _sync(rank, phase):
    offset, drift, ref = CLOCKS[rank]
    return {"kind": "sync", "phase": phase,
            "model": {"offset_s": offset, "drift": drift, "ref_s": ref},
            "residual_s": 2e-8 if rank else 0.0, "points": []}


def generate(run_dir, reps, progress):
    """Every rank's raw file of every launch; returns the number of rows written."""
    task = progress.add_task("generate raw files", total=LAUNCHES * len(BENCHES) * len(SIZES))
    rng = np.random.default_rng(1)
    files = {(k, r): None for k in range(LAUNCHES) for r in range(NRANKS)}
    rows = 0
    try:
        for (k, r) in files:
            path = run_dir / "raw" / f"launch-{k}" / f"rank-{r}.raw"
            path.parent.mkdir(parents=True, exist_ok=True)
            files[(k, r)] = f = open(path, "wb")
            js = json.dumps(_header(r, k)).encode()
            f.write(FILE_MAGIC + struct.pack("<II", 1, len(js)) + js)
            _block(f, _sync(r, "before"))
        t0 = 0.0
        for k in range(LAUNCHES):
            for bench in BENCHES:
                for size in SIZES:
                    sched = t0 + PERIOD * np.arange(reps)
                    t0 += PERIOD * reps + 1.0
                    series = _series_rows(rng, bench, size, sched)
                    for r in range(NRANKS):
                        meta = {"kind": "series", "bench": bench, "algo": "mpi", "size": size,
                                "reps": reps, "stop": "reps_max", "window_s": 1e-5,
                                "role": "idle", "peer": -1, "window_msgs": None,
                                "count": size, "datatype": "MPI_BYTE", "root_rotate": False}
                        if r not in series:
                            _block(files[(k, r)], meta)
                            continue
                        g_start, g_end, meta["role"], meta["peer"] = series[r]
                        valid = (rng.random(reps) >= LATE).astype(np.uint8)
                        _block(files[(k, r)], meta, [_to_local(g_start, r), _to_local(g_end, r),
                                                     _to_local(sched, r), valid])
                        rows += reps
                    progress.advance(task)
        for (k, r), f in files.items():
            _block(f, _sync(r, "after"))
    finally:
        for f in files.values():
            if f is not None:
                f.close()
    return rows


def context_for(reps):
    return {"schema_version": 1, "run_id": "ingest-scale", "created": "2024-01-01T00:00:00+00:00",
            "status": "completed", "error": None, "command": ["bench/ingest_scale.py"],
            "mpi": "openmpi", "np": NRANKS, "benches": list(BENCHES), "sizes": SIZES,
            "launches": LAUNCHES, "seed": 1, "reps": reps}


# ---------------------------------------------------------------- stages

def stage_ingest(run_dir):
    context = json.loads((run_dir / "context.json").read_text())
    return f"{ingest(run_dir, context).num_rows:,} rows stored"


def stage_summary(run_dir):
    # What `mpiscope show RUN` does (cli_views.cmd_show, text output).
    rows = views.show_rows(run_dir)
    run = open_run(run_dir)
    views.format_show(rows, run)
    views.notes(rows, run)
    return f"{len(rows)} lines, {sum(r['n'] for r in rows):,} samples derived"


STAGES = {"ingest": stage_ingest, "summary": stage_summary}


def _cpu():
    """CPU seconds this process has used, all its threads (user and system)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _child(name, run_dir, profile, conn):
    """Runs one stage; sends (seconds, peak RSS bytes, note, profile text, CPU seconds)."""
    prof = cProfile.Profile() if profile else None
    cpu0 = _cpu()
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    note = STAGES[name](run_dir)
    if prof:
        prof.disable()
    seconds = time.perf_counter() - t0
    cpu = _cpu() - cpu0
    text = ""
    if prof:
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(25)
        text = out.getvalue()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024   # Linux: KiB
    conn.send((seconds, peak, note, text, cpu))
    conn.close()


def run_stage(name, run_dir, profile, progress):
    """The stage in a fresh process, so the peak RSS is the stage's own (as
    `mpiscope run` and `mpiscope show` are separate processes)."""
    task = progress.add_task(name, total=None)
    ctx = multiprocessing.get_context("spawn")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(name, run_dir, profile, child))
    proc.start()
    child.close()
    while not parent.poll(0.2):
        if not proc.is_alive():
            raise SystemExit(f"ingest_scale: the {name} stage died (exit code {proc.exitcode})")
    result = parent.recv()
    proc.join()
    progress.update(task, total=1, completed=1)
    return result


# ---------------------------------------------------------------- report

def _span(values):
    return f"{min(values):.3g}-{max(values):.3g}" if len(values) > 1 else ""


def report(samples, trials, gen_seconds):
    """The two tables (stages, verdict), printed; and whether the target is met.
    `trials`: [{stage: (seconds, peak RSS, note, profile, CPU seconds)}], one per trial."""
    gib = 2.0 ** 30
    rows = [["generate", gen_seconds, None, round(samples / gen_seconds), None, "", "(not part of the target)"]]
    for name in STAGES:
        secs = [t[name][0] for t in trials]
        sec = statistics.median(secs)
        cpu = statistics.median(t[name][4] for t in trials)
        rows.append([name, sec, cpu, round(samples / sec), max(t[name][1] for t in trials) / gib, _span(secs),
                     trials[-1][name][2]])
    totals = [sum(t[name][0] for name in STAGES) for t in trials]
    total = statistics.median(totals)
    cpu = statistics.median(sum(t[name][4] for name in STAGES) for t in trials)
    rows.append(["ingest + summary", total, cpu, round(samples / total),
                 max(t[name][1] for t in trials for name in STAGES) / gib, _span(totals), ""])
    stages = benchjson.show(f"{samples:,} samples ({NRANKS} ranks, {LAUNCHES} launches, "
                            f"{len(BENCHES)} benchmarks x {len(SIZES)} sizes), median of {len(trials)} "
                            f"trial{'s' if len(trials) > 1 else ''}",
                            ["stage", "seconds", "CPU s", "samples/s", "peak RSS GiB", "trials s", "note"], rows,
                            ["CPU s: user and system time of the stage's process, all its threads"])
    scaled = total * TARGET_SAMPLES / samples
    met = scaled <= TARGET_SECONDS
    verdict = benchjson.show(
        "against the target", ["samples", "cores", "ingest + summary s", "per 100 M samples s", "target s",
                               "verdict"],
        [[samples, len(os.sched_getaffinity(0)), total, scaled, TARGET_SECONDS, "met" if met else "MISSED"]],
        [f"target: {TARGET_SAMPLES / 1e6:.0f} M samples ingested and summarized in <= "
         f"{TARGET_SECONDS:.0f} s on 2 cores"])
    return met, [stages, verdict]


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument("--samples", type=count, default=TARGET_SAMPLES, metavar="N",
                    help="stored samples (rows) to generate, rounded down to whole repetitions; "
                         "decimal units allowed: 2M, 1e8 (default: 100M)")
    ap.add_argument("--tmpdir", type=Path, default=None, metavar="DIR",
                    help="where to put the synthetic run (default: the system's temporary "
                         "directory); 100 M samples need about 4.5 GB there")
    ap.add_argument("--trials", type=int, default=1, metavar="N",
                    help="run both stages N times on the same raw files; the tables give medians "
                         "(default: 1)")
    ap.add_argument("--profile", action="store_true",
                    help="profile each stage with cProfile and print the 25 costliest calls")
    args = benchjson.parse(ap)
    reps = args.samples // rows_per_rep()
    if reps < 1:
        ap.error(f"--samples must be at least {rows_per_rep()} (one repetition of every series)")
    if args.trials < 1:
        ap.error(f"--trials {args.trials}: at least one trial is needed")
    if args.tmpdir is not None and not args.tmpdir.is_dir():
        ap.error(f"--tmpdir {args.tmpdir}: not a directory")

    console = Console(stderr=True)
    with tempfile.TemporaryDirectory(prefix="ingest-scale-", dir=args.tmpdir) as tmp:
        run_dir = Path(tmp)
        progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                            MofNCompleteColumn(), TimeElapsedColumn(), console=console)
        with progress:
            t0 = time.perf_counter()
            samples = generate(run_dir, reps, progress)
            gen_seconds = time.perf_counter() - t0
            (run_dir / "context.json").write_text(json.dumps(context_for(reps)))
            trials = [{name: run_stage(name, run_dir, args.profile, progress) for name in STAGES}
                      for _ in range(args.trials)]
        for name, (*_, text, _cpu_s) in trials[-1].items():
            if text:
                console.print(f"[bold]profile: {name}[/bold]")
                console.print(text, markup=False, highlight=False)
        ok, tables = report(samples, trials, gen_seconds)
    benchjson.write(args, "ingest_scale", tables,
                    {"samples": samples, "reps": reps, "generate_s": gen_seconds,
                     "trials": args.trials,
                     "stages": {name: {"seconds": statistics.median(t[name][0] for t in trials),
                                       "trial_seconds": [t[name][0] for t in trials],
                                       "trial_cpu_seconds": [t[name][4] for t in trials],
                                       "peak_rss_bytes": max(t[name][1] for t in trials),
                                       "note": trials[-1][name][2]}
                                for name in STAGES},
                     "target_met": ok})
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
