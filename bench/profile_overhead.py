# SPDX-License-Identifier: BSD-3-Clause
"""What does the profiler cost? Side by side in one run, in turns, per trial:

1. one wrapped call on a null operation (MPI_Send to MPI_PROC_NULL), with
   the profiling library preloaded and without (native/pmpi/tests/null_calls.c, 1
   Open MPI rank; the best of 7 loops of 10^6 calls each time);
2. LAMMPS's Lennard-Jones melt (tests/data/in.lj, --steps steps, 4 Open MPI
   ranks, oversubscribed) under `mpiscope profile` and plain, alternating
   which goes first: the launch's wall time, and LAMMPS's own "Loop time"
   (the run's steps alone, without start-up and MPI_Init).

The first table gives the null call's time plain and wrapped (medians over
the trials, ns) and the difference, with the per-call cost each profile
measured of itself (its context); the second, for LAMMPS, per measure (wall,
loop) the medians plain and profiled, the ratio of the medians, the median,
least and largest of the per-trial ratios, and the spread of the plain runs.
Targets: <= 50 ns added per call; LAMMPS profiled / plain <= 1.02.

LAMMPS is the program --lmp names (default: `lmp` on PATH); without it the
LAMMPS part is skipped and the null-call part still measured.

To reproduce (a few seconds per trial for the null call, about 10 s more
per trial with LAMMPS):

    .venv/bin/python bench/profile_overhead.py --trials 5 --steps 400 --lmp lmp --json profile-overhead.json
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchjson
from mpiscope.engine.mpi import find_mpi
from mpiscope.profile.build import LIBRARY, ensure_library

HERE = Path(__file__).resolve().parent
LJ = HERE.parent / "tests" / "data" / "in.lj"
LAUNCH = ["mpirun.openmpi", "-n", "4", "--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")


def null_call_ns(build, preload, tmp):
    env = dict(ENV, MPISCOPE_PROFILE_DIR=str(tmp / "null"))
    if preload:
        env["LD_PRELOAD"] = str(build / LIBRARY)
    out = subprocess.run(["mpirun.openmpi", "-n", "1", str(build / "null-calls")], env=env, capture_output=True,
                         text=True, check=True).stdout
    return float(out.split()[-1])


def loop_time(screen):
    """LAMMPS's own "Loop time of T on P procs for N steps" line."""
    for line in screen.splitlines():
        if line.startswith("Loop time of "):
            return float(line.split()[3])
    sys.exit(f"no 'Loop time' in LAMMPS's output:\n{screen[-2000:]}")


def lammps_s(lmp, profiled, steps, tmp):
    """(wall s of the launch, LAMMPS's loop time s, the profile's overhead or None)."""
    app = [lmp, "-in", str(LJ), "-var", "steps", str(steps), "-log", "none"]
    started = time.perf_counter()
    if profiled:
        cmd = [sys.executable, "-m", "mpiscope.cli", "profile", "--out", str(tmp / "runs"), "--json", "--",
               *LAUNCH, *app]
    else:
        cmd = [*LAUNCH, *app]
    p = subprocess.run(cmd, env=ENV, capture_output=True, text=True, cwd=tmp)
    wall = time.perf_counter() - started
    if p.returncode:
        sys.exit(f"failed: {' '.join(cmd)}\n{p.stderr[-2000:]}")
    if profiled:
        run = tmp / "runs" / json.loads(p.stdout)["run_id"]
        ctx = json.loads((run / "context.json").read_text())
        # The launch's wall time as the context recorded it (without mpiscope's own start and ingest).
        return ctx["duration_s"], loop_time((run / "launch-0.log").read_text()), ctx["overhead"]
    return wall, loop_time(p.stdout), None


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument("--trials", type=int, default=5,
                    help="rounds of all four measurements; the medians are printed (default %(default)s)")
    ap.add_argument("--steps", type=int, default=400, help="LAMMPS time steps per run (default %(default)s)")
    ap.add_argument("--lmp", metavar="PATH", default="lmp",
                    help="the LAMMPS executable, built with Open MPI (default: lmp on PATH)")
    a = benchjson.parse(ap)
    if a.trials < 1:
        ap.error(f"--trials must be at least 1, got {a.trials}")
    lmp = shutil.which(a.lmp)
    if lmp is None:
        benchjson.skipped("LAMMPS", "--lmp")
    build = ensure_library(find_mpi(mpi="openmpi"), "tests")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        plain_ns, wrapped_ns, plain_s, prof_s, measured = [], [], [], [], []
        plain_loop, prof_loop = [], []
        for t in range(a.trials):
            plain_ns.append(null_call_ns(build, False, tmp))
            wrapped_ns.append(null_call_ns(build, True, tmp))
            if lmp:
                order = (False, True) if t % 2 == 0 else (True, False)
                for profiled in order:
                    s, loop, o = lammps_s(lmp, profiled, a.steps, tmp)
                    (prof_s if profiled else plain_s).append(s)
                    (prof_loop if profiled else plain_loop).append(loop)
                    if o:
                        measured.append(o["per_call_ns_median"])
            print(f"trial {t + 1}: null call {plain_ns[-1]:.1f} ns plain, {wrapped_ns[-1]:.1f} ns wrapped"
                  + (f"; LAMMPS wall {plain_s[-1]:.3f} s plain, {prof_s[-1]:.3f} s profiled, loop "
                     f"{plain_loop[-1]:.3f} s plain, {prof_loop[-1]:.3f} s profiled" if plain_s else ""),
                  file=sys.stderr, flush=True)
    m = statistics.median
    tables = [benchjson.show(
        f"null call (MPI_Send to MPI_PROC_NULL), median over {a.trials} trials",
        ["plain ns", "wrapped ns", "added ns", "profile's own estimate ns"],
        [[m(plain_ns), m(wrapped_ns), m(wrapped_ns) - m(plain_ns), m(measured) if measured else None]],
        ["target: <= 50 ns added per call",
         "profile's own estimate: the per-call cost the LAMMPS profiles measured of themselves"])]
    if plain_s:
        rows = []
        for what, plain, prof in (("wall", plain_s, prof_s), ("loop", plain_loop, prof_loop)):
            ratios = sorted(b / a for a, b in zip(plain, prof))
            rows.append([what, m(plain), m(prof), m(prof) / m(plain), m(ratios), ratios[0], ratios[-1],
                         min(plain), max(plain)])
        tables.append(benchjson.show(
            f"LAMMPS LJ melt, {a.steps} steps, 4 ranks, median over {a.trials} trials",
            ["measure", "plain s", "profiled s", "ratio of medians", "per-trial ratio median",
             "per-trial ratio min", "per-trial ratio max", "plain min s", "plain max s"], rows,
            ["wall: the launch; loop: LAMMPS's own Loop time (the steps alone)",
             "target: profiled / plain <= 1.02"]))
    benchjson.write(a, "profile_overhead", tables,
                    {"null_call_ns": {"plain": plain_ns, "wrapped": wrapped_ns},
                     "lammps_s": {"wall": {"plain": plain_s, "profiled": prof_s},
                                  "loop": {"plain": plain_loop, "profiled": prof_loop}},
                     "profile_per_call_ns": measured},
                    mpi=benchjson.mpi_names("mpicc.openmpi"))


if __name__ == "__main__":
    main()
