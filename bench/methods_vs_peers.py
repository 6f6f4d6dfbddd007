# SPDX-License-Identifier: BSD-3-Clause
"""Does `mpiscope run --methods osu,imb` reproduce what OSU and IMB print,
on every operation the two methods time and every power of 4 from 1 B to
4 MiB?

Each trial takes the operations in turn (ping-pong latency, bandwidth,
allreduce, reduce, bcast, gather, scatter, allgather, alltoall,
reduce_scatter, sendrecv, exchange, barrier; --ops picks some) and runs,
for one operation, three launches one after the other on the same ranks
with the same binding and library (Open MPI's mpicc.openmpi), each
covering all sizes: the OSU 7.x program (osu_latency, osu_bw,
osu_allreduce, ...; `-m 1:4194304`), IMB-MPI1 with its benchmark
(PingPong gives IMB's latency and bandwidth; `-msglen` with the sizes
alone), and `mpiscope run --methods osu,imb` of the operation, read with
`mpiscope methods --json`. The three launches' order rotates from one
trial to the next. The reproduction is the number mpiscope derives from
the rows it stored as each tool times them (OSU: its latency, bandwidth or
"Avg Latency"; IMB: PingPong's t[usec] and Mbytes/sec, the others' t_avg).

OSU has no Sendrecv or Exchange: those rows are IMB's alone (mpiscope's
benchmarks ring and exchange). reduce_scatter is mpiscope's
reduce_scatter_block, its size each rank's block, which is IMB's
Reduce_scatter size; osu_reduce_scatter's size is the whole vector, so its
column shows osu_reduce_scatter at p x the row's size.

The first table gives per operation and size each real tool's number
(median over the trials; µs, bandwidth MB/s) and the ratio of mpiscope's
reproduction to it: the median over the trials with the smallest and
largest. The target is a median ratio within 0.9-1.1. The second lists
every cell outside it with what was measured about it: how far the real
tool's own number moved between trials, and the largest cause
`mpiscope methods` finds between the reproduced number and mpiscope's
median (a "statistic" share is the tail: calls much slower than the
typical one, which the tools' means take in), and names the measurement
that accounts for the offset: the reproduction's tail, the tool's own
spread, trials on both sides of 1, or none. The third counts, per tool,
the numbers more than 25% worse than their cell's typical one (the median
over the trials), split into those of a launch slow at half or more of its
sizes together and the isolated ones: how often a preempted call moved a
number, apart from launches that ran slow throughout.

OSU's programs are found in --osu-dir (the `mpi` folder of an OSU 7.x
installation or build, or a folder holding the programs); IMB-MPI1 is
--imb. Either may be left out: its columns are then skipped. On a machine
other jobs use, --lock FILE holds an flock on FILE around each
trial's launches, so that MPI jobs which take the same lock run
between them, never beside them. --tables-from FILE prints the tables of
the trials a document this script wrote holds, measuring nothing.

To reproduce (about a minute per trial on 2 ranks):

    .venv/bin/python bench/methods_vs_peers.py --osu-dir PATH/libexec/osu-micro-benchmarks/mpi \\
        --imb PATH/IMB-MPI1 --trials 7 --json docs/validation/methods-vs-peers.json
"""

import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import benchjson
from mpiscope.common.sizes import format_size
from peer_tools import IMB_BENCHMARKS, add_options, imb_rows, osu_rows, ratio_cells, run, tools_given

SIZES = tuple(4**i for i in range(12))  # 1 B to 4 MiB
BENCHES = (
    "pingpong",
    "bw",
    "allreduce",
    "reduce",
    "bcast",
    "gather",
    "scatter",
    "allgather",
    "alltoall",
    "reduce_scatter",
    "sendrecv",
    "exchange",
    "barrier",
)
# mpiscope's benchmark for an operation named otherwise.
MPISCOPE_BENCH = {"reduce_scatter": "reduce_scatter_block", "sendrecv": "ring"}
# Operations whose OSU size is the whole vector, p x the row's (each rank's block).
OSU_WHOLE = ("reduce_scatter",)
# What each tool prints for an operation, as `mpiscope methods` names it.
OSU_COLUMN = {"pingpong": "Latency (us)", "bw": "Bandwidth (MB/s)"}
IMB_COLUMN = {"pingpong": "t[usec]", "bw": "Mbytes/sec"}
WITHIN = (0.9, 1.1)
WORSE = 1.25  # a number this much worse than its cell's typical one took a stall


def sizes_of(bench):
    return (0,) if bench == "barrier" else SIZES


def column(tool, bench):
    if tool == "osu":
        return OSU_COLUMN.get(bench, "Avg Latency(us)")
    return IMB_COLUMN.get(bench, "t_avg[usec]")


def real_osu(program, bench, np) -> dict:
    """{size: OSU's number} for one operation, by the row's size (OSU's
    size / p where it is the whole vector)."""
    scale = np if bench in OSU_WHOLE else 1
    rows = osu_rows(program, [s * scale for s in SIZES], np)
    return {size // scale: row[0] for size, row in rows.items()}


def parse_ops(text) -> tuple:
    """The --ops names, in the bench's order; ValueError naming an unknown one."""
    names = [x.strip() for x in text.split(",") if x.strip()]
    unknown = [x for x in names if x not in BENCHES]
    if unknown or not names:
        raise ValueError(f"--ops: unknown operation {', '.join(unknown) or '(none)'}; choose from {', '.join(BENCHES)}")
    return tuple(b for b in BENCHES if b in names)


def real_imb(imb, bench, np) -> dict:
    """{size: IMB's number} for one operation."""
    rows = imb_rows(imb, [IMB_BENCHMARKS[bench]], SIZES, np, exact=True)
    return {size: row[column("imb", bench)] for (_, size), row in rows.items()}


def reproduced(out_root: Path, bench, np, methods) -> str:
    """The run id of `mpiscope run --methods` of one operation at every size."""
    doc = json.loads(
        run(
            [
                sys.executable,
                "-m",
                "mpiscope.cli",
                "run",
                "-n",
                str(np),
                "--mpi",
                "openmpi",
                "--bench",
                MPISCOPE_BENCH.get(bench, bench),
                "--sizes",
                ",".join(map(str, SIZES)),
                "--methods",
                ",".join(methods),
                "--time-budget",
                "0.5",
                "--json",
                "--out",
                str(out_root),
            ]
        )
    )
    return doc["run_id"]


def read_methods(out_root: Path, run_id) -> dict:
    """{(tool, size): {"number": the reproduction, "causes": {cause: share of
    the tool's number}}}, and {(None, size): mpiscope's median} in the tool's unit."""
    got = json.loads(run([sys.executable, "-m", "mpiscope.cli", "methods", run_id, "--json", "--out", str(out_root)]))
    out = {}
    for row in got["rows"]:
        if row["median"] is not None:
            out[(None, row["size"])] = row["median"] * (1e-6 if row["unit"] == "B/s" else 1e6)
        for t in row["tools"]:
            number = t["number"]
            shares = {c: v / number for c, v in (t.get("by_cause") or {}).items() if number and v is not None}
            out[(t["method"], row["size"])] = {
                "number": t["printed"].get(column(t["method"], row["bench"])),
                "causes": shares,
            }
    return out


def one_operation(bench, trial, osu, imb, methods, np, out_root) -> dict:
    """One trial of one operation: the three launches, in an order that
    rotates; {"osu": {size: number}, "imb": ..., "mpiscope": run id}."""
    launches = [("mpiscope", lambda: reproduced(out_root, bench, np, methods))]
    if bench in osu:
        launches.append(("osu", lambda: real_osu(osu[bench], bench, np)))
    if imb:
        launches.append(("imb", lambda: real_imb(imb, bench, np)))
    k = trial % len(launches)
    return {name: launch() for name, launch in launches[k:] + launches[:k]}


def one_trial(trial, ops, osu, imb, methods, np, out_root, lock) -> dict:
    """Every operation of `ops` once, under the lock; mpiscope's runs read after it."""
    asked = time.monotonic()
    with benchjson.held(lock):
        began = time.monotonic()
        got = {b: one_operation(b, trial, osu, imb, methods, np, out_root) for b in ops}
    print(
        f"trial {trial + 1}: waited {began - asked:.0f} s for the lock, ran {time.monotonic() - began:.0f} s",
        file=sys.stderr,
        flush=True,
    )
    return {b: {"ours": read_methods(out_root, g.pop("mpiscope")), "real": g} for b, g in got.items()}


def measured_ops(trials) -> tuple:
    """The operations the trials measured, in the bench's order."""
    return tuple(b for b in BENCHES if trials and b in trials[0])


def cells(trials, methods):
    """Per (bench, size, tool): the trials' real numbers, reproductions and cause shares."""
    for bench in measured_ops(trials):
        for size in sizes_of(bench):
            for tool in methods:
                real = [tr[bench]["real"].get(tool, {}).get(size) for tr in trials]
                ours = [(tr[bench]["ours"].get((tool, size)) or {}) for tr in trials]
                yield bench, size, tool, real, [o.get("number") for o in ours], [o.get("causes", {}) for o in ours]


def measured_cause(bench, ratio, low, high, spread, tail):
    """What was measured that accounts for a median ratio outside WITHIN:
    the reproduction's own tail (its mean took in preempted calls, worse
    by at least half the offset), the real tool moving as much from one
    trial to the next, the trials' ratios lying on both sides of 1, or none."""
    worse = ratio < 1 if bench == "bw" else ratio > 1
    tail_worse = -tail if bench == "bw" else tail  # a bandwidth's tail lowers it
    if worse and tail_worse >= abs(ratio - 1) / ratio / 2:
        return "tail of the reproduction"
    if spread >= max(ratio, 1 / ratio):
        return "the tool's own spread"
    if low <= 1 <= high:
        return "trials on both sides of 1"
    return "none measured"


def worse_flags(values, bench):
    """Per value, whether it is more than WORSE worse than the values'
    median (for a bandwidth: lower); None where there is no value, or
    fewer than three to give a typical one."""
    v = [x for x in values if x]
    if len(v) < 3:
        return [None] * len(values)
    typical = statistics.median(v)
    return [None if not x else (x < typical / WORSE if bench == "bw" else x > typical * WORSE) for x in values]


def worse_share(values, bench):
    """(how many of `values` are worse, of how many) as worse_flags counts them."""
    flags = [f for f in worse_flags(values, bench) if f is not None]
    return sum(flags), len(flags)


def launch_wide(flags_by_size):
    """Of one launch's worse numbers (its flags per size, one operation), how
    many came with half or more of the launch's sizes worse together: the
    launch ran slow throughout (a state of the machine or of the launch),
    not a call preempted at one size. Returns (launch-wide, isolated)."""
    flags = [f for f in flags_by_size if f is not None]
    worse = sum(flags)
    return (worse, 0) if flags and worse >= len(flags) / 2 else (0, worse)


def main():
    ap = benchjson.parser(__doc__)
    add_options(ap, trials=7)
    ap.add_argument("--np", type=int, default=2, help="ranks (default %(default)s)")
    ap.add_argument(
        "--lock",
        metavar="FILE",
        type=Path,
        help="hold an flock on FILE around each trial's launches (a machine other MPI jobs use)",
    )
    ap.add_argument(
        "--tables-from",
        metavar="FILE",
        type=Path,
        help="measure nothing: print (and with --json write) the tables of the trials FILE holds, "
        "a document this script wrote",
    )
    ap.add_argument(
        "--ops",
        metavar="LIST",
        default=",".join(BENCHES),
        help=f"the operations to compare, a comma list of {', '.join(BENCHES)} (default: all)",
    )
    args = benchjson.parse(ap)
    try:
        ops = parse_ops(args.ops)
    except ValueError as e:
        ap.error(str(e))
    if args.tables_from:
        if not args.tables_from.is_file():
            ap.error(f"--tables-from {args.tables_from}: no such file; name a document this script wrote")
        trials, methods = trials_of(args.tables_from)
        report(args, trials, methods, final=True)
        return
    if args.trials < 1 or args.np < 2:
        ap.error(f"--trials must be at least 1 and --np at least 2, got {args.trials} and {args.np}")
    osu, imb = tools_given(args, ops)
    if args.np > 2 and {"pingpong", "bw"} & set(osu):
        print("skipped: OSU's osu_latency and osu_bw: they run on exactly two ranks", flush=True)
        osu = {b: p for b, p in osu.items() if b not in ("pingpong", "bw")}
    methods = [m for m, present in (("osu", osu), ("imb", imb)) if present]
    if not methods:
        sys.exit("nothing to compare with: give --osu-dir or --imb")

    trials, began = [], time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for t in range(args.trials):
            trials.append(one_trial(t, ops, osu, imb, methods, args.np, Path(tmp), args.lock))
            print(f"trial {t + 1}/{args.trials} done ({time.monotonic() - began:.0f} s)", file=sys.stderr, flush=True)
            report(args, trials, methods, final=t + 1 == args.trials)


def trials_of(path: Path):
    """The trials and the tools of a document this script wrote (--tables-from)."""
    doc = json.loads(path.read_text())
    trials, methods = [], []
    for kept in doc["results"]["trials"]:
        tr = {c["bench"]: {"real": {}, "ours": {}} for c in kept}
        for c in kept:
            methods += [c["tool"]] if c["tool"] not in methods else []
            at = tr[c["bench"]]
            at["real"].setdefault(c["tool"], {})[c["size"]] = c["real"]
            at["ours"][(c["tool"], c["size"])] = {"number": c["reproduced"], "causes": c["causes"] or {}}
            at["ours"][(None, c["size"])] = c["mpiscope_median"]
        trials.append(tr)
    return trials, methods


def report(args, trials, methods, final):
    """The tables and --json of the trials so far (printed at the end)."""
    rows, outside, within, counted = [], [], 0, 0
    stalls = {(tool, who): [0, 0, 0, 0] for tool in methods for who in ("real", "reproduced")}
    quiet = None if final else open(os.devnull, "w")  # noqa: SIM115
    ops = measured_ops(trials)
    for bench in ops:
        unit = "MB/s" if bench == "bw" else "us"
        for size in sizes_of(bench):
            row = [bench, format_size(size), unit]
            for tool in ("osu", "imb"):
                if tool not in methods:
                    row += [None] * 4
                    continue
                real = [tr[bench]["real"].get(tool, {}).get(size) for tr in trials]
                ours = [(tr[bench]["ours"].get((tool, size)) or {}).get("number") for tr in trials]
                shown = [x for x in real if x]
                row += [statistics.median(shown) if shown else None, *ratio_cells(zip(ours, real))]
            mine = [tr[bench]["ours"].get((None, size)) for tr in trials]
            row.append(statistics.median([x for x in mine if x]) if any(mine) else None)
            rows.append(row)
    per_launch = {}  # (tool, who, bench, trial): the worse flags of the launch's sizes
    for bench, size, tool, real, ours, causes in cells(trials, methods):
        ratio = ratio_cells(zip(ours, real))
        if ratio[0] is None:
            continue
        counted += 1
        for who, values in (("real", real), ("reproduced", ours)):
            for t, flag in enumerate(worse_flags(values, bench)):
                per_launch.setdefault((tool, who, bench, t), []).append(flag)
        if WITHIN[0] <= ratio[0] <= WITHIN[1]:
            within += 1
            continue
        shown = [x for x in real if x]
        share = {c: statistics.median([s.get(c, 0.0) for s in causes]) for c in {c for s in causes for c in s}}
        top = max(share, key=lambda c: abs(share[c])) if share else None
        spread, tail = max(shown) / min(shown), share.get("statistic", 0.0)
        outside.append(
            [
                bench,
                format_size(size),
                tool,
                *ratio,
                spread,
                top,
                share.get(top),
                tail,
                measured_cause(bench, *ratio, spread, tail),
            ]
        )
    for (tool, who, _, _), flags in per_launch.items():
        kept, counts = stalls[(tool, who)], [f for f in flags if f is not None]
        wide, isolated = launch_wide(flags)
        kept[0], kept[1], kept[2], kept[3] = (
            kept[0] + sum(counts),
            kept[1] + len(counts),
            kept[2] + wide,
            kept[3] + isolated,
        )
    columns = [
        "operation",
        "size",
        "unit",
        "OSU",
        "ours/OSU",
        "min",
        "max",
        "IMB",
        "ours/IMB",
        "min",
        "max",
        "mpiscope median",
    ]
    tables = [
        benchjson.show(
            f"mpiscope's reproduction of OSU and IMB, {args.np} Open MPI ranks, {len(trials)} trials in turns: "
            f"{within} of {counted} medians within {WITHIN[0]}-{WITHIN[1]}",
            columns,
            rows,
            [
                "ours/OSU, ours/IMB: median over the trials of mpiscope's reproduction (mpiscope run --methods, "
                "mpiscope methods) / the real tool's number, with the smallest and largest trial; target 0.9-1.1",
                "OSU, IMB: the real tools' numbers (median over the trials); mpiscope median: its own, "
                "synchronized repetitions, slowest rank (`mpiscope methods` splits the difference into causes)",
                "reduce_scatter: the size is each rank's block (IMB's size; mpiscope's reduce_scatter_block); "
                "OSU's column is osu_reduce_scatter at p x that size, its whole vector; sendrecv is mpiscope's "
                "ring; OSU has no sendrecv or exchange",
            ],
            file=quiet,
        ),
        benchjson.show(
            f"The {len(outside)} cells outside {WITHIN[0]}-{WITHIN[1]}, and what was measured about them",
            [
                "operation",
                "size",
                "tool",
                "ours/tool",
                "min",
                "max",
                "tool's max/min",
                "largest cause",
                "its share",
                "statistic share",
                "measured cause",
            ],
            outside,
            [
                "tool's max/min: the real tool's largest number over its smallest, across the trials",
                "largest cause, its share: the cause `mpiscope methods` finds largest between the reproduced "
                "number and mpiscope's median, as a share of the reproduced number (median over the trials)",
                "statistic share: the tail the tool's mean takes in (its mean against the median call)",
                "measured cause: tail of the reproduction (its statistic share makes it worse by at least half "
                "the offset), the tool's own spread (its max/min reaches the ratio), trials on both sides of 1, "
                "or none measured",
            ],
            file=quiet,
        ),
        benchjson.show(
            f"Numbers more than {WORSE:.2f}x worse than their cell's typical one (the median over the trials)",
            [
                "tool",
                "numbers",
                "worse",
                "of",
                "share",
                "launch-wide",
                "isolated",
                "isolated share",
            ],
            [
                [tool, who, worse, n, worse / max(1, n), wide, isolated, isolated / max(1, n)]
                for tool in methods
                for who in ("real", "reproduced")
                for worse, n, wide, isolated in [stalls[(tool, who)]]
            ],
            [
                "worse: slower (a bandwidth: lower) than the cell's median over the trials by more than "
                f"{WORSE:.2f}x; a preempted call or a disturbed launch",
                "launch-wide: worse in a launch (one tool, operation and trial) with half or more of its sizes "
                "worse together, a launch slow throughout; isolated: the rest, a call or two preempted",
            ],
            file=quiet,
        ),
    ]
    results = {
        "sizes": list(SIZES),
        "np": args.np,
        "within": within,
        "cells": counted,
        "trials": [
            [
                {
                    "tool": tool,
                    "bench": b,
                    "size": s,
                    "real": tr[b]["real"].get(tool, {}).get(s),
                    "reproduced": (tr[b]["ours"].get((tool, s)) or {}).get("number"),
                    "causes": (tr[b]["ours"].get((tool, s)) or {}).get("causes"),
                    "mpiscope_median": tr[b]["ours"].get((None, s)),
                }
                for tool in methods
                for b in ops
                for s in sizes_of(b)
            ]
            for tr in trials
        ],
    }
    benchjson.write(args, "methods_vs_peers", tables, results, mpi=benchjson.mpi_names("mpicc.openmpi"))


if __name__ == "__main__":
    main()
