# SPDX-License-Identifier: BSD-3-Clause
"""How long does a trustworthy table take, against IMB?

Each trial runs, one after the other on 2 Open MPI ranks bound to cores,
IMB-MPI1 (PingPong Sendrecv Allreduce Reduce Bcast Allgather Alltoall Barrier,
1 B - 4 MiB) and `mpiscope run` on the same eight operations and sizes
(pingpong, ring, allreduce, reduce, bcast, allgather, alltoall, barrier).

The first table gives per trial, and their medians in the last row, the
wall times of both and their ratio, and the share of mpiscope's series
whose 95% CI of the median is within +-2% of it (in percent). The second
gives where mpiscope's time went (medians over the trials, seconds):
interpreter start, imports and plan, build check, launch (launcher and MPI
start and exit), the engine's phases (start-up, clock sync, series set-up,
warm-up, batches, stopping rule, writing each series' raw block: record,
and after the last series the closing clock sync with the raw files closed:
finish), ingest, the quality verdicts, the summary table with the process's
exit, what fell between these parts, and the sum of those after the last
measurement (finish, ingest, verdicts, summary and exit). The progress
lines on stderr also count the series outside +-2% by the engine's stop
reason. With --lock FILE each trial holds an exclusive flock on FILE, the
lock other MPI jobs on the machine take, so none runs beside a trial.
Targets: ratio <= 1, share >= 95%; the parts after the last measurement
<= 0.2 s together; the launcher's start and exit within 50 ms of mpirun's
wall time on an empty MPI program (the row "mpirun of an empty program",
measured when mpicc.openmpi is found).

IMB-MPI1 (built with Open MPI's mpicc.openmpi) is the program --imb names;
without it IMB is skipped and only mpiscope's side is measured. Options
after `--` go to `mpiscope run`.

To reproduce (5-10 s per trial, under a minute with the defaults):

    .venv/bin/python bench/time_to_table.py --imb PATH/IMB-MPI1 --trials 3 --json time-to-table.json
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchjson
from mpiscope.engine.build import ensure_engine
from mpiscope.measure import launch

IMB_OPS = ["PingPong", "Sendrecv", "Allreduce", "Reduce", "Bcast", "Allgather", "Alltoall", "Barrier"]
OUR_OPS = "pingpong,ring,allreduce,reduce,bcast,allgather,alltoall,barrier"
CI_TARGET = 0.02


def timed(cmd, env=None):
    began = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return time.perf_counter() - began, out.stdout


def imb_seconds(imb):
    cmd = ["mpirun.openmpi", "-n", "2", "--bind-to", "core", str(imb), *IMB_OPS, "-msglog", "0:22", "-npmin", "2"]
    return timed(cmd, launch.launch_env("openmpi"))[0]


EMPTY_MPI = "#include <mpi.h>\nint main(int c, char **v) { MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n"


def empty_program(tmp):
    """An MPI program that only starts and ends, built with mpicc.openmpi (None without it)."""
    source, program = Path(tmp) / "empty.c", Path(tmp) / "empty"
    source.write_text(EMPTY_MPI)
    try:
        subprocess.run(["mpicc.openmpi", "-O2", str(source), "-o", str(program)], check=True, capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return program


def empty_seconds(program):
    """Wall seconds of mpirun starting and ending `program` on 2 ranks bound to cores."""
    return timed(["mpirun.openmpi", "-n", "2", "--bind-to", "core", str(program)], launch.launch_env("openmpi"))[0]


def interpreter_start():
    """Seconds to start Python and mpiscope's command line (its --help)."""
    return timed([sys.executable, "-m", "mpiscope.cli", "--help"])[0]


def ours(out_root, extra, start):
    """Wall seconds, the share of series within the CI target, and the time per
    part (`start`: the interpreter's own start, taken off the imports)."""
    cmd = [
        sys.executable,
        "-m",
        "mpiscope.cli",
        "run",
        "-n",
        "2",
        "--bench",
        OUR_OPS,
        "--sizes",
        "1-4M:x2",
        "--json",
        "--out",
        str(out_root),
        *extra,
    ]
    began = time.time()
    wall, stdout = timed(cmd)
    ended = time.time()
    result = json.loads(stdout)
    rows = [r for r in result["rows"] if r.get("median")]
    wide = [r for r in rows if (r["ci_high"] - r["ci_low"]) / 2 > CI_TARGET * r["median"]]
    within = len(rows) - len(wide)
    # Outside the target, by why the engine stopped: "ci" means the engine's
    # rule saw the target reached where show's interval is wider.
    outside = {stop: sum(r["stop"] == stop for r in wide) for stop in sorted({r["stop"] for r in wide})}
    timing = json.loads((Path(result["run_dir"]) / "context.json").read_text())["timing"]
    engine = timing["engine"]
    engine_total = sum(engine.values())
    parts = {
        "interpreter start": start,
        "imports, plan, context": timing["launched_at"] - began - start - timing["build_check_s"],
        "build check": timing["build_check_s"],
        "launch (launcher start and exit)": timing["launch_s"] - engine_total,
        **{name.replace("_", " "): s for name, s in engine.items()},
        "ingest": timing["ingest_s"],
        "verdicts": timing["verdicts_s"],
        "summary and exit": ended - timing["stored_at"],
    }
    parts["rest"] = wall - sum(parts.values())  # between the parts: none expected
    after = ["finish", "ingest", "verdicts", "summary and exit"]
    parts["after the last measurement"] = sum(parts.get(k, 0.0) for k in after)
    return wall, within / max(1, len(result["rows"])), len(result["rows"]), parts, outside


def main():
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    ap = benchjson.parser(__doc__)
    ap.usage = "%(prog)s [-h] [--json FILE] [--imb PATH] [--trials TRIALS] [-- RUN OPTIONS]"
    ap.add_argument("--imb", metavar="PATH", help="IMB-MPI1 built with Open MPI (mpicc.openmpi)")
    ap.add_argument(
        "--trials", type=int, default=3, help="rounds of both; the medians are printed (default %(default)s)"
    )
    ap.add_argument(
        "--lock",
        type=Path,
        metavar="FILE",
        help="hold an exclusive flock on FILE during each trial, so MPI jobs taking it wait",
    )
    args = benchjson.parse(ap, argv[: argv.index("--")] if "--" in argv else argv)
    if args.trials < 1:
        ap.error(f"--trials must be at least 1, got {args.trials}")
    imb = args.imb if args.imb and os.access(args.imb, os.X_OK) else None
    if not args.imb:
        benchjson.skipped("IMB", "--imb")
    elif not imb:
        print(f"skipped: IMB: {args.imb} is not an executable (--imb PATH)", flush=True)
    ensure_engine("openmpi")
    rows = {}

    def keep(name, value):
        rows.setdefault(name, []).append(value)

    share_name = f"series within ±{CI_TARGET:.0%} CI %"
    series, outsides = [], []
    with tempfile.TemporaryDirectory() as tmp:
        empty = empty_program(tmp)
        for t in range(args.trials):
            with benchjson.held(args.lock):
                if imb:
                    keep("IMB-MPI1 wall s", imb_seconds(imb))
                wall, share, n, parts, outside = ours(Path(tmp), extra, interpreter_start())
                series.append(n)
                outsides.append(outside)
                keep("mpiscope wall s", wall)
                if imb:
                    keep("ratio mpiscope / IMB", wall / rows["IMB-MPI1 wall s"][-1])
                keep(share_name, 100 * share)
                for name, seconds in parts.items():
                    keep(f"  {name}", seconds)
                if empty:
                    keep("  mpirun of an empty program (for the launch)", empty_seconds(empty))
                print(
                    f"trial {t + 1}/{args.trials}: "
                    + ", ".join(f"{k} {v[-1]:.3g}" for k, v in rows.items() if not k.startswith("  "))
                    + f" (of {n} series); outside ±2% by stop reason: "
                    + (", ".join(f"{k} {v}" for k, v in outside.items()) or "none"),
                    file=sys.stderr,
                )
    m = statistics.median
    top = [k for k in rows if not k.startswith("  ")]
    tables = [
        benchjson.show(
            "time to a trustworthy table" + ("" if imb else " (IMB skipped)"),
            ["trial", *top, "series"],
            [
                *([t + 1, *(rows[k][t] for k in top), series[t]] for t in range(args.trials)),
                ["median", *(m(rows[k]) for k in top), m(series)],
            ],
            ["targets: ratio mpiscope / IMB <= 1, series within ±2% >= 95%"],
        ),
        benchjson.show(
            f"where mpiscope's time went, median over {args.trials} trials",
            ["part", "median s"],
            [[k.strip(), m(v)] for k, v in rows.items() if k.startswith("  ")],
        ),
    ]
    benchjson.write(
        args,
        "time_to_table",
        tables,
        {
            "per_trial": {k.strip(): v for k, v in rows.items()},
            "series": series,
            "outside_by_stop_reason": outsides,
            "run_options": extra,
        },
        mpi=list(dict.fromkeys(benchjson.mpi_names("mpicc.openmpi") + benchjson.default_mpi())),
    )


if __name__ == "__main__":
    main()
