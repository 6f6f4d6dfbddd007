# SPDX-License-Identifier: BSD-3-Clause
"""Does `mpiscope run --methods osu,imb` reproduce what OSU and IMB print?

Each trial runs, one after the other, on the same ranks with the same
binding and library (Open MPI's mpicc.openmpi): the OSU Micro-Benchmarks'
osu_latency, osu_bw, osu_allreduce, osu_bcast, osu_alltoall,
osu_allgather and osu_barrier; IMB-MPI1's PingPong, Allreduce, Bcast,
Alltoall, Allgather and Barrier; and `mpiscope run --methods osu,imb` of
the same operations and sizes, read with `mpiscope methods --json`. The
reproduction is the number mpiscope derives from the rows it stored as
each tool times them (OSU: its latency, bandwidth or "Avg Latency"; IMB:
PingPong's t[usec] and Mbytes/sec, the collectives' t_avg).

The table gives per operation and size each real tool's number (median
over the trials; µs, bandwidth MB/s) and the ratio of mpiscope's
reproduction to it: the median over the trials with the smallest and
largest. The target is a median ratio within 0.9-1.1. A tool's number
moves from one run to the next by more than that on a busy machine: the
spread of the ratios over the trials says how much.

OSU's programs are found in --osu-dir (the `mpi` folder of an OSU 7.x
installation, or a folder holding the programs); IMB-MPI1 is --imb. Either
may be left out: its columns are then skipped. --np sets the ranks (2 by
default); with more ranks than cores the ranks share them, unbound and
yielding, for all three tools alike. osu_latency and osu_bw run on exactly
two ranks, so with more they are left out.

To reproduce (about a minute per trial on 2 ranks):

    .venv/bin/python bench/methods_vs_peers.py --osu-dir PATH/libexec/osu-micro-benchmarks/mpi --imb PATH/IMB-MPI1 --trials 3 --json docs/validation/methods-vs-peers.json
"""

import json
import statistics
import sys
import tempfile
from pathlib import Path

import benchjson
from mpiscope.common.sizes import format_size
from peer_tools import IMB_BENCHMARKS, add_options, imb_rows, osu_rows, ratio_cells, run, tools_given

SIZES = (8, 1024, 65536, 1048576)
BENCHES = ("pingpong", "bw", "allreduce", "bcast", "alltoall", "allgather", "barrier")
# What each tool prints for an operation, as `mpiscope methods` names it.
OSU_COLUMN = {"pingpong": "Latency (us)", "bw": "Bandwidth (MB/s)"}
IMB_COLUMN = {"pingpong": "t[usec]", "bw": "Mbytes/sec"}


def sizes_of(bench):
    return (0,) if bench == "barrier" else SIZES


def real_osu(programs, np) -> dict:
    """{(bench, size): OSU's number}."""
    return {(bench, size): row[0] for bench, program in programs.items()
            for size, row in osu_rows(program, SIZES, np).items()}


def real_imb(imb, np) -> dict:
    """{(bench, size): IMB's number}."""
    rows = imb_rows(imb, [IMB_BENCHMARKS[b] for b in BENCHES], SIZES, np)
    out = {}
    for bench in BENCHES:
        for size in sizes_of(bench):
            row = rows.get((IMB_BENCHMARKS[bench], size))
            if row:
                out[(bench, size)] = row[IMB_COLUMN.get(bench, "t_avg[usec]")]
    return out


def reproduced(out_root: Path, np, methods) -> dict:
    """{(tool, bench, size): mpiscope's reproduction}, and {(bench, size): mpiscope's median}."""
    cmd = [sys.executable, "-m", "mpiscope.cli"]
    doc = json.loads(run([*cmd, "run", "-n", str(np), "--mpi", "openmpi", "--bench", ",".join(BENCHES),
                          "--sizes", ",".join(map(str, SIZES)), "--methods", ",".join(methods),
                          "--time-budget", "0.5", "--json", "--out", str(out_root)]))
    got = json.loads(run([*cmd, "methods", doc["run_id"], "--json", "--out", str(out_root)]))
    out, medians = {}, {}
    for row in got["rows"]:
        key = (row["bench"], row["size"])
        medians[key] = row["median"] * (1e-6 if row["unit"] == "B/s" else 1e6)
        for t in row["tools"]:
            column = (OSU_COLUMN if t["method"] == "osu" else IMB_COLUMN).get(
                row["bench"], "Avg Latency(us)" if t["method"] == "osu" else "t_avg[usec]")
            out[(t["method"], *key)] = t["printed"][column]
    return out, medians


def main():
    ap = benchjson.parser(__doc__)
    add_options(ap, trials=3)
    ap.add_argument("--np", type=int, default=2, help="ranks (default %(default)s)")
    args = benchjson.parse(ap)
    if args.trials < 1 or args.np < 2:
        ap.error(f"--trials must be at least 1 and --np at least 2, got {args.trials} and {args.np}")
    osu, imb = tools_given(args, BENCHES)
    if args.np > 2 and {"pingpong", "bw"} & set(osu):
        print("skipped: OSU's osu_latency and osu_bw: they run on exactly two ranks", flush=True)
        osu = {b: p for b, p in osu.items() if b not in ("pingpong", "bw")}
    methods = [m for m, present in (("osu", osu), ("imb", imb)) if present]
    if not methods:
        sys.exit("nothing to compare with: give --osu-dir or --imb")

    trials = []
    with tempfile.TemporaryDirectory() as tmp:
        for t in range(args.trials):
            real = {"osu": real_osu(osu, args.np) if osu else {}, "imb": real_imb(imb, args.np) if imb else {}}
            ours, medians = reproduced(Path(tmp), args.np, methods)
            trials.append({"real": real, "reproduced": ours, "mpiscope": medians})
            print(f"trial {t + 1}/{args.trials} done", file=sys.stderr, flush=True)

    rows = []
    for bench in BENCHES:
        unit = "MB/s" if bench == "bw" else "us"
        for size in sizes_of(bench):
            row = [bench, format_size(size), unit]
            for tool in ("osu", "imb"):
                real = [tr["real"][tool].get((bench, size)) for tr in trials]
                ours = [tr["reproduced"].get((tool, bench, size)) for tr in trials]
                shown = [x for x in real if x]
                row += [statistics.median(shown) if shown else None, *ratio_cells(zip(ours, real))]
            mine = [tr["mpiscope"].get((bench, size)) for tr in trials]
            row.append(statistics.median([x for x in mine if x]) if any(mine) else None)
            rows.append(row)
    columns = ["operation", "size", "unit", "OSU", "ours/OSU", "min", "max", "IMB", "ours/IMB", "min", "max",
               "mpiscope median"]
    tables = [benchjson.show(
        f"mpiscope's reproduction of OSU and IMB, {args.np} Open MPI ranks, {args.trials} trials in turns",
        columns, rows,
        ["ours/OSU, ours/IMB: median over the trials of mpiscope's reproduction (mpiscope run --methods, "
         "mpiscope methods) / the real tool's number, with the smallest and largest trial; target 0.9-1.1",
         "OSU, IMB: the real tools' numbers (median over the trials); mpiscope median: its own, "
         "synchronized repetitions, slowest rank (`mpiscope methods` splits the difference into causes)"])]
    results = {"sizes": list(SIZES), "np": args.np, "trials": [
        [{"tool": tool, "bench": b, "size": s, "real": tr["real"][tool].get((b, s)),
          "reproduced": tr["reproduced"].get((tool, b, s)), "mpiscope_median": tr["mpiscope"].get((b, s))}
         for tool in methods for b in BENCHES for s in sizes_of(b)] for tr in trials]}
    benchjson.write(args, "methods_vs_peers", tables, results, mpi=benchjson.mpi_names("mpicc.openmpi"))


if __name__ == "__main__":
    main()
