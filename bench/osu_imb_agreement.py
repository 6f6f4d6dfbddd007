# SPDX-License-Identifier: BSD-3-Clause
"""Do mpiscope's numbers agree with OSU's and IMB's?

Each trial runs, one after the other on 2 Open MPI ranks bound to cores:
the OSU Micro-Benchmarks' osu_latency, osu_bw, osu_allreduce and
osu_bcast; IMB-MPI1's PingPong, Allreduce and Bcast; and `mpiscope run` of
pingpong, bw, allreduce and bcast at the same sizes. Each tool reports what
it reports: OSU the mean over its loop (collectives: the mean over ranks of
each rank's mean), IMB its PingPong time and the collectives' t_avg over
ranks, mpiscope the median of synchronized repetitions (collectives: the
slowest rank's time) and, as `mpiscope export --format osu` prints it, the
mean of those repetitions.

The table gives per operation and size each tool's number (median over the
trials; latency in microseconds, bandwidth in MB/s) and the ratios of
mpiscope's median and mean to OSU's and IMB's numbers (median over the
trials, with their smallest and largest). Point-to-point latency and
bandwidth measure the same thing in all three and should agree within the
trials' spread. For collectives the tools measure different things: a
collective timed as the slowest rank from a common start is longer than the
average rank's time of its calls, each timed from the rank's own exit of a
barrier; `mpiscope run --methods` reproduces the peers' own methods and
attributes the difference.

OSU's programs are found in --osu-dir (the `mpi` folder of an OSU 7.x
installation built with Open MPI's mpicc.openmpi, holding `pt2pt/` and
`collective/`, or a folder holding the programs); IMB-MPI1 is --imb. Either
may be left out: its columns are then skipped.

To reproduce (about 30 s per trial):

    .venv/bin/python bench/osu_imb_agreement.py --osu-dir PATH/libexec/osu-micro-benchmarks/mpi --imb PATH/IMB-MPI1 --trials 5 --json osu-imb.json
"""

import json
import re
import statistics
import sys
import tempfile
from pathlib import Path

import benchjson
from mpiscope.common.sizes import format_size
from peer_tools import add_options, imb_numbers, osu_numbers, ratio_cells, run, tools_given

SIZES = (8, 1024, 65536, 1048576)
# mpiscope benchmark -> (OSU program, IMB benchmark, unit)
OPS = {"pingpong": ("osu_latency", "PingPong", "us"), "bw": ("osu_bw", None, "MB/s"),
       "allreduce": ("osu_allreduce", "Allreduce", "us"), "bcast": ("osu_bcast", "Bcast", "us")}


def mpiscope_numbers(out_root: Path) -> dict:
    """{(bench, size): (median, mean as OSU's layout prints it)} in us or MB/s."""
    cmd = [sys.executable, "-m", "mpiscope.cli"]
    doc = json.loads(run([*cmd, "run", "-n", "2", "--mpi", "openmpi", "--bench", ",".join(OPS),
                          "--sizes", ",".join(map(str, SIZES)), "--json", "--out", str(out_root)]))
    values = {}
    for row in doc["rows"]:
        if row["algo"] == "mpi" and row["size"] in SIZES and row.get("median"):
            scale = 1e-6 if row["unit"] == "B/s" else 1e6
            values[(row["bench"], row["size"])] = [row["median"] * scale, None]
    for bench in OPS:
        text = run([*cmd, "export", doc["run_id"], "--format", "osu", "--bench", bench,
                    "--out", str(out_root)])
        for line in text.splitlines():
            m = re.match(r"^(\d+)\s+([0-9.]+)", line)
            if m and (bench, int(m.group(1))) in values:
                values[(bench, int(m.group(1)))][1] = float(m.group(2))
    return values


def main():
    ap = benchjson.parser(__doc__)
    add_options(ap, trials=5)
    args = benchjson.parse(ap)
    if args.trials < 1:
        ap.error(f"--trials must be at least 1, got {args.trials}")
    osu, imb = tools_given(args, OPS)

    trials = []
    with tempfile.TemporaryDirectory() as tmp:
        for t in range(args.trials):
            got = {"osu": {b: osu_numbers(p, SIZES) for b, p in osu.items()},
                   "imb": imb_numbers(imb, ("PingPong", "Allreduce", "Bcast"), SIZES) if imb else {},
                   "mpiscope": mpiscope_numbers(Path(tmp))}
            trials.append(got)
            print(f"trial {t + 1}/{args.trials} done", file=sys.stderr, flush=True)

    rows = []
    for bench, (_, imb_name, unit) in OPS.items():
        for size in SIZES:
            ours = [tr["mpiscope"].get((bench, size), [None, None]) for tr in trials]
            theirs_osu = [tr["osu"].get(bench, {}).get(size) for tr in trials]
            theirs_imb = [tr["imb"].get((imb_name, size)) for tr in trials]
            med = lambda xs: statistics.median(x for x in xs if x) if any(xs) else None  # noqa: E731
            rows.append([bench, format_size(size), unit, med(theirs_osu), med(theirs_imb),
                         med([o[0] for o in ours]), med([o[1] for o in ours]),
                         *ratio_cells(zip([o[0] for o in ours], theirs_osu)),
                         *ratio_cells(zip([o[1] for o in ours], theirs_osu)),
                         *ratio_cells(zip([o[0] for o in ours], theirs_imb))])
    columns = ["operation", "size", "unit", "OSU", "IMB", "mpiscope median", "mpiscope mean",
               "median/OSU", "min", "max", "mean/OSU", "min", "max", "median/IMB", "min", "max"]
    tables = [benchjson.show(
        f"mpiscope beside OSU and IMB, 2 Open MPI ranks, {args.trials} trials in turns", columns, rows,
        ["ratios: median over the trials of mpiscope's number / the peer's, with the smallest and "
         "largest trial; for bandwidth a ratio above 1 means mpiscope saw more",
         "collectives: the slowest rank from a common start (mpiscope) against the mean rank, each "
         "call timed from the rank's own exit of a barrier (OSU, IMB t_avg): mpiscope's are longer "
         "by method, not by overhead; `mpiscope run --methods` and `mpiscope methods` split the difference"])]
    results = {"sizes": list(SIZES),
               "trials": [{tool: {str(k): v for k, v in d.items()} for tool, d in tr.items()}
                          for tr in trials]}
    benchjson.write(args, "osu_imb_agreement", tables, results,
                    mpi=benchjson.mpi_names("mpicc.openmpi"))


if __name__ == "__main__":
    main()
