"""What does the profiler cost? Side by side in one run, in turns:

1. one wrapped call on a null operation (MPI_Send to MPI_PROC_NULL), with
   the library preloaded and without (pmpi/tests/null_calls.c, 1 rank; the
   best of 7 loops of 10^6 calls each time) — goal ≤ 50 ns added;
2. LAMMPS's Lennard-Jones melt (tests/data/in.lj, --steps, 4 ranks) under
   `mpiscope profile` and plain, alternating which goes first — goal ≤ 2%
   (median of the trials): the launch's wall time, and LAMMPS's own "Loop
   time" (the run's steps alone, without start-up and MPI_Init), with the
   spread of the per-trial ratios;
and the per-call cost each profile measured of itself (its context).

    .venv/bin/python bench/profile_overhead.py [--trials 5] [--steps 400]
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def lammps_s(profiled, steps, tmp):
    """(wall s of the launch, LAMMPS's loop time s, the profile's overhead or None)."""
    app = ["lmp", "-in", str(LJ), "-var", "steps", str(steps), "-log", "none"]
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
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument("--steps", type=int, default=400)
    a = ap.parse_args()
    build = ensure_library(find_mpi(mpi="openmpi"), "tests")
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        plain_ns, wrapped_ns, plain_s, prof_s, measured = [], [], [], [], []
        plain_loop, prof_loop = [], []
        for t in range(a.trials):
            plain_ns.append(null_call_ns(build, False, tmp))
            wrapped_ns.append(null_call_ns(build, True, tmp))
            if shutil.which("lmp"):
                order = (False, True) if t % 2 == 0 else (True, False)
                for profiled in order:
                    s, loop, o = lammps_s(profiled, a.steps, tmp)
                    (prof_s if profiled else plain_s).append(s)
                    (prof_loop if profiled else plain_loop).append(loop)
                    if o:
                        measured.append(o["per_call_ns_median"])
            print(f"trial {t + 1}: null call {plain_ns[-1]:.1f} ns plain, {wrapped_ns[-1]:.1f} ns wrapped"
                  + (f"; LAMMPS wall {plain_s[-1]:.3f} s plain, {prof_s[-1]:.3f} s profiled, loop "
                     f"{plain_loop[-1]:.3f} s plain, {prof_loop[-1]:.3f} s profiled" if plain_s else ""),
                  flush=True)
    m = statistics.median
    print(f"\nnull call: plain {m(plain_ns):.1f} ns, wrapped {m(wrapped_ns):.1f} ns, added "
          f"{m(wrapped_ns) - m(plain_ns):.1f} ns per call (goal <= 50 ns)")
    if plain_s:
        for what, plain, prof in (("wall", plain_s, prof_s), ("loop", plain_loop, prof_loop)):
            ratios = sorted(b / a for a, b in zip(plain, prof))
            print(f"LAMMPS LJ ({a.steps} steps, 4 ranks) {what}: plain {m(plain):.3f} s, profiled {m(prof):.3f} s, "
                  f"ratio of medians {m(prof) / m(plain):.4f} (goal <= 1.02); per-trial ratios "
                  f"median {m(ratios):.4f}, min {ratios[0]:.4f}, max {ratios[-1]:.4f}; plain spread "
                  f"{min(plain):.3f}-{max(plain):.3f} s")
        print(f"the profiles measured {m(measured):.1f} ns per call of themselves")


if __name__ == "__main__":
    main()
