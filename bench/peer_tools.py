# SPDX-License-Identifier: BSD-3-Clause
"""Running the peer tools a user built (the OSU Micro-Benchmarks 7.x and
IMB-MPI1, with Open MPI's mpicc.openmpi) and reading what they print, for
the bench scripts that set mpiscope beside them (osu_imb_agreement.py,
methods_vs_peers.py). Ranks are started as `mpiscope run` starts them:
bound to cores, or, with more ranks than cores, unbound and yielding."""

from __future__ import annotations

import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import benchjson
from mpiscope.measure import launch

# OSU's program for each mpiscope benchmark.
OSU_PROGRAMS = {
    "pingpong": "osu_latency",
    "bw": "osu_bw",
    "barrier": "osu_barrier",
    "bcast": "osu_bcast",
    "allreduce": "osu_allreduce",
    "allgather": "osu_allgather",
    "alltoall": "osu_alltoall",
    "reduce": "osu_reduce",
    "gather": "osu_gather",
    "scatter": "osu_scatter",
    "reduce_scatter": "osu_reduce_scatter",
}
# IMB-MPI1's benchmark for each (PingPong also gives IMB's bandwidth).
IMB_BENCHMARKS = {
    "pingpong": "PingPong",
    "bw": "PingPong",
    "barrier": "Barrier",
    "bcast": "Bcast",
    "allreduce": "Allreduce",
    "allgather": "Allgather",
    "alltoall": "Alltoall",
    "reduce": "Reduce",
    "gather": "Gather",
    "scatter": "Scatter",
    "reduce_scatter": "Reduce_scatter",
    "sendrecv": "Sendrecv",
    "exchange": "Exchange",
}


def add_options(ap, trials: int) -> None:
    """The peer tools' options of a bench script: --osu-dir, --imb, --trials."""
    ap.add_argument(
        "--osu-dir",
        metavar="PATH",
        type=Path,
        help="OSU Micro-Benchmarks 7.x built with mpicc.openmpi: its mpi/ folder",
    )
    ap.add_argument("--imb", metavar="PATH", help="IMB-MPI1 built with mpicc.openmpi")
    ap.add_argument(
        "--trials",
        type=int,
        default=trials,
        help="rounds of every tool, in turns; medians are printed (default %(default)s)",
    )


def tools_given(args, benches) -> tuple[dict, str | None]:
    """({bench: OSU program found for it}, IMB-MPI1 or None), with a line
    saying which tool is skipped and why."""
    osu = {}
    if not args.osu_dir:
        benchjson.skipped("OSU", "--osu-dir")
    else:
        named = [b for b in benches if b in OSU_PROGRAMS]  # OSU has no Sendrecv or Exchange
        osu = {b: p for b in named if (p := find_osu(args.osu_dir, OSU_PROGRAMS[b]))}
        if not osu:
            print(f"skipped: OSU: none of {', '.join(OSU_PROGRAMS[b] for b in named)} in {args.osu_dir}", flush=True)
    imb = args.imb if args.imb and os.access(args.imb, os.X_OK) else None
    if not args.imb:
        benchjson.skipped("IMB", "--imb")
    elif not imb:
        print(f"skipped: IMB: {args.imb} is not an executable (--imb PATH)", flush=True)
    return osu, imb


def launch_words(np: int) -> list[str]:
    """mpirun.openmpi for `np` ranks, bound as mpiscope binds them."""
    words = ["mpirun.openmpi", "-n", str(np)]
    if np > launch.local_cpus():
        return words + ["--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]
    return words + ["--bind-to", "core"]


def run(cmd) -> str:
    """A command's standard output; the script stops, with its stderr, when it fails."""
    p = subprocess.run(list(map(str, cmd)), capture_output=True, text=True, env=launch.launch_env("openmpi"))
    if p.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stderr[-2000:]}")
    return p.stdout


def find_osu(osu_dir: Path, program: str) -> Path | None:
    """An OSU program in an installation's mpi/ folder (or in a folder holding the programs)."""
    for where in (
        osu_dir / program,
        osu_dir / "pt2pt" / program,
        osu_dir / "collective" / program,
        osu_dir / "pt2pt" / "standard" / program,
        osu_dir / "collective" / "blocking" / program,
    ):
        if where.is_file() and os.access(where, os.X_OK):
            return where
    return None


def osu_rows(program: Path, sizes, np: int = 2, full: bool = False) -> dict:
    """{size: [the numbers OSU prints after the size]} (osu_barrier, which has
    no size column: under size 0); `full` adds -f (min, max, iterations)."""
    cmd = [*launch_words(np), program]
    if program.name != "osu_barrier":
        cmd += ["-m", f"{min(sizes)}:{max(sizes)}"]
    out = run(cmd + (["-f"] if full else []))
    rows = {}
    for line in out.splitlines():
        fields = line.split()
        if not fields or line.lstrip().startswith("#") or not all(re.fullmatch(r"[0-9.]+", f) for f in fields):
            continue
        if program.name == "osu_barrier":
            rows[0] = [float(f) for f in fields]
        elif int(fields[0]) in sizes:
            rows[int(fields[0])] = [float(f) for f in fields[1:]]
    return rows


def osu_numbers(program: Path, sizes, np: int = 2) -> dict:
    """{size: the number OSU prints} (its latency, bandwidth or average)."""
    return {size: row[0] for size, row in osu_rows(program, sizes, np).items()}


def imb_rows(imb: str, benchmarks, sizes, np: int = 2, exact: bool = False) -> dict:
    """{(IMB benchmark, size): its printed row as {column: value}}: PingPong
    #repetitions, t[usec], Mbytes/sec; collectives #repetitions, t_min, t_max,
    t_avg; Sendrecv and Exchange also Mbytes/sec; Barrier (no size) under size 0. Collectives on all `np` ranks only.
    IMB runs every power of two between the smallest and largest size, or,
    `exact`, the sizes alone (its -msglen file)."""
    logs = [s.bit_length() - 1 for s in sizes if s > 0]
    with tempfile.NamedTemporaryFile("w", suffix=".msglen") as lengths:
        lengths.write("".join(f"{s}\n" for s in sorted(set(sizes)) if s > 0))
        lengths.flush()
        chosen = ["-msglen", lengths.name] if exact else ["-msglog", f"{min(logs)}:{max(logs)}"]
        out = run([*launch_words(np), imb, *dict.fromkeys(benchmarks), *chosen, "-npmin", str(np)])
    rows, bench = {}, None
    for line in out.splitlines():
        m = re.match(r"^# Benchmarking (\w+)", line)
        if m:
            bench = m.group(1)
            continue
        fields = line.split()
        if not bench or not fields or not all(re.fullmatch(r"[0-9.]+", f) for f in fields):
            continue
        values = [float(f) for f in fields]
        if bench == "Barrier" and len(values) == 4:
            rows[(bench, 0)] = dict(zip(("#repetitions", "t_min[usec]", "t_max[usec]", "t_avg[usec]"), values))
        elif bench == "PingPong" and len(values) == 4 and int(values[0]) in sizes:
            rows[(bench, int(values[0]))] = dict(zip(("#repetitions", "t[usec]", "Mbytes/sec"), values[1:]))
        elif len(values) in (5, 6) and int(values[0]) in sizes:
            rows[(bench, int(values[0]))] = dict(
                zip(("#repetitions", "t_min[usec]", "t_max[usec]", "t_avg[usec]", "Mbytes/sec"), values[1:])
            )
    return rows


def imb_numbers(imb: str, benchmarks, sizes, np: int = 2) -> dict:
    """{(IMB benchmark, size): PingPong's t[usec], or a collective's t_avg[usec]}."""
    return {
        key: row.get("t[usec]", row.get("t_avg[usec]")) for key, row in imb_rows(imb, benchmarks, sizes, np).items()
    }


def ratio_cells(pairs):
    """Median, smallest and largest of per-trial ratios a/b (None when absent)."""
    r = [a / b for a, b in pairs if a and b]
    return [statistics.median(r), min(r), max(r)] if r else [None, None, None]
