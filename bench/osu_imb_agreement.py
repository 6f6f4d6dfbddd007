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
average rank's time of back-to-back calls; `mpiscope run --methods`
reproduces the peers' own methods and attributes the difference.

OSU's programs are found in --osu-dir (the `mpi` folder of an OSU 7.x
installation built with Open MPI's mpicc.openmpi, holding `pt2pt/` and
`collective/`, or a folder holding the programs); IMB-MPI1 is --imb. Either
may be left out: its columns are then skipped.

To reproduce (about 30 s per trial):

    .venv/bin/python bench/osu_imb_agreement.py --osu-dir PATH/libexec/osu-micro-benchmarks/mpi --imb PATH/IMB-MPI1 --trials 5 --json osu-imb.json
"""

import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import benchjson
from mpiscope.common.sizes import format_size
from mpiscope.measure import launch

SIZES = (8, 1024, 65536, 1048576)
# mpiscope benchmark -> (OSU program, IMB benchmark, unit)
OPS = {"pingpong": ("osu_latency", "PingPong", "us"), "bw": ("osu_bw", None, "MB/s"),
       "allreduce": ("osu_allreduce", "Allreduce", "us"), "bcast": ("osu_bcast", "Bcast", "us")}
LAUNCH = ["mpirun.openmpi", "-n", "2", "--bind-to", "core"]


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True, env=launch.launch_env("openmpi"))
    if p.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return p.stdout


def find_osu(osu_dir: Path, program: str) -> Path | None:
    for where in (osu_dir / program, osu_dir / "pt2pt" / program, osu_dir / "collective" / program,
                  osu_dir / "pt2pt" / "standard" / program, osu_dir / "collective" / "blocking" / program):
        if where.is_file() and os.access(where, os.X_OK):
            return where
    return None


def osu_numbers(program: Path) -> dict:
    """{size: the number OSU prints} (its second column)."""
    out = run([*LAUNCH, str(program), "-m", f"{min(SIZES)}:{max(SIZES)}"])
    values = {}
    for line in out.splitlines():
        m = re.match(r"^\s*(\d+)\s+([0-9.]+)", line)
        if m and int(m.group(1)) in SIZES:
            values[int(m.group(1))] = float(m.group(2))
    return values


def imb_numbers(imb: str) -> dict:
    """{(IMB benchmark, size): PingPong's t[usec], or a collective's t_avg[usec]}."""
    out = run([*LAUNCH, imb, "PingPong", "Allreduce", "Bcast", "-msglog", "3:20", "-npmin", "2"])
    values, bench = {}, None
    for line in out.splitlines():
        m = re.match(r"^# Benchmarking (\w+)", line)
        if m:
            bench = m.group(1)
            continue
        fields = line.split()
        if bench and len(fields) >= 3 and fields[0].isdigit() and int(fields[0]) in SIZES:
            # PingPong: bytes reps t[usec] Mbytes/sec; collectives: bytes reps t_min t_max t_avg
            values[(bench, int(fields[0]))] = float(fields[2] if bench == "PingPong" else fields[4])
    return values


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


def ratio_cells(pairs):
    """Median, smallest and largest of per-trial ratios a/b (None when absent)."""
    r = [a / b for a, b in pairs if a and b]
    return [statistics.median(r), min(r), max(r)] if r else [None, None, None]


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument("--osu-dir", metavar="PATH", type=Path,
                    help="OSU Micro-Benchmarks 7.x built with mpicc.openmpi: its mpi/ folder")
    ap.add_argument("--imb", metavar="PATH", help="IMB-MPI1 built with mpicc.openmpi")
    ap.add_argument("--trials", type=int, default=5,
                    help="rounds of every tool, in turns; medians are printed (default %(default)s)")
    args = benchjson.parse(ap)
    if args.trials < 1:
        ap.error(f"--trials must be at least 1, got {args.trials}")
    osu = {b: find_osu(args.osu_dir, p) for b, (p, _, _) in OPS.items()} if args.osu_dir else {}
    if not args.osu_dir:
        benchjson.skipped("OSU", "--osu-dir")
    elif not any(osu.values()):
        print(f"skipped: OSU: no osu_latency, osu_bw, osu_allreduce or osu_bcast in {args.osu_dir}")
    imb = args.imb if args.imb and os.access(args.imb, os.X_OK) else None
    if not args.imb:
        benchjson.skipped("IMB", "--imb")
    elif not imb:
        print(f"skipped: IMB: {args.imb} is not an executable (--imb PATH)", flush=True)

    trials = []
    with tempfile.TemporaryDirectory() as tmp:
        for t in range(args.trials):
            got = {"osu": {b: osu_numbers(p) for b, p in osu.items() if p},
                   "imb": imb_numbers(imb) if imb else {},
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
         "collectives: the slowest rank from a common start (mpiscope) against the mean rank of "
         "back-to-back calls (OSU, IMB t_avg): mpiscope's are longer by method, not by overhead"])]
    results = {"sizes": list(SIZES),
               "trials": [{tool: {str(k): v for k, v in d.items()} for tool, d in tr.items()}
                          for tr in trials]}
    benchjson.write(args, "osu_imb_agreement", tables, results,
                    mpi=benchjson.mpi_names("mpicc.openmpi"))


if __name__ == "__main__":
    main()
