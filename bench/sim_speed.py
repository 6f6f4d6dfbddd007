"""The simulator's speed and scale, one run each (ratios and counts, not a
timed test):

  events per second on one core (simulation only, schedule already held;
  goal >= 20 M/s), on recursive-doubling allreduce at 2^16 ranks and ring
  allgather at 2^11 ranks; binomial broadcast at 2^23 ranks (goal <= 30 s,
  <= 8 GiB) and recursive-doubling allreduce at 2^20 ranks (goal <= 60 s),
  wall time including generating the schedule, and peak memory; ring
  allgather and pairwise alltoall at 2^20 ranks (~10^12 messages), answered
  by symmetry (rank 0 simulated for all).

With --loggopsim DIR (a LogGOPSim build made by hand, holding txt2bin and
LogGOPSim; never committed) the same GOAL file runs in both and both finish
times and event rates are printed.

    flock /tmp/mpiscope-heavy.lock .venv/bin/python bench/sim_speed.py [--small] [--loggopsim DIR]
"""

import argparse
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from mpiscope.sim import binary  # noqa: E402

# LogGP-like costs (s, s/B): L 1.5 µs, o 0.3 µs, g 0.2 µs, G 0.1 ns/B
COSTS = ["--L", "1.5e-6", "--o-s", "3e-7", "--o-r", "3e-7", "--g", "2e-7", "--G", "1e-10"]


def sim(*argv):
    t0 = time.perf_counter()
    doc = binary.simulate([*map(str, argv), *COSTS])
    return doc, time.perf_counter() - t0


def line(name, doc, wall, goal=""):
    print(f"{name:44s} {doc['nranks']:>9d} ranks {doc['nops']:>11d} ops  finish {doc['makespan_median_s'] * 1e6:10.2f} us"
          f"  events {doc['events']:>11d}  {doc['events_per_s'] / 1e6:6.1f} M events/s  wall {wall:6.1f} s"
          f"  peak {doc['peak_rss_bytes'] / 2 ** 30:5.2f} GiB {goal}")


def loggopsim(dirpath, goal_file, tmp):
    d = Path(dirpath)
    binf = Path(tmp) / "s.bin"
    subprocess.run([d / "txt2bin", "-i", goal_file, "-o", binf], check=True, capture_output=True)
    t0 = time.perf_counter()
    # LogGOPSim takes integer nanoseconds: L 1500, o 300, g 200, G 0.1 -> its -G is per byte in ns
    p = subprocess.run([d / "LogGOPSim", "-f", binf, "-L", "1500", "-o", "300", "-g", "200", "-G", "0.1"],
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    print(f"LogGOPSim ({wall:.2f} s wall):")
    for ln in p.stdout.splitlines()[-6:]:
        print("   ", ln)
    m = re.search(r"(\d+)\s+events", p.stdout)
    if m:
        print(f"    LogGOPSim event rate: {int(m.group(1)) / wall / 1e6:.2f} M events/s (wall, with loading)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="scale runs at 2^20 / 2^16 ranks only")
    ap.add_argument("--loggopsim", metavar="DIR", help="a LogGOPSim build (txt2bin, LogGOPSim)")
    a = ap.parse_args()
    binary.ensure_built()
    print("event rate (simulation only):")
    for bench, algo, p, size in (("allreduce", "recursive_doubling", 1 << 16, 8), ("allgather", "ring", 1 << 11, 8)):
        doc, wall = sim("--bench", bench, "--algo", algo, "-p", p, "--size", size)
        line(f"{bench}/{algo}", doc, wall, "(goal >= 20 M events/s)")
    print("scale (wall includes generating the schedule):")
    big = [("bcast", "binomial", 1 << (20 if a.small else 23), 8, "(goal <= 30 s, <= 8 GiB at 2^23)"),
           ("allreduce", "recursive_doubling", 1 << (16 if a.small else 20), 8, "(goal <= 60 s at 2^20)")]
    for bench, algo, p, size, goal in big:
        doc, wall = sim("--bench", bench, "--algo", algo, "-p", p, "--size", size)
        line(f"{bench}/{algo}", doc, wall, goal)
    print("a million ranks, ~10^12 messages (the regime that answered):")
    from mpiscope.sim.costs import SimCosts
    from mpiscope.sim.simulate import Extras, algorithm
    costs = SimCosts(L=1.5e-6, o_s=3e-7, o_r=3e-7, g=2e-7, G=1e-10)
    for bench, algo in (("allgather", "ring"), ("alltoall", "pairwise")):
        t0 = time.perf_counter()
        ans = algorithm(bench, algo, 1 << 20, 8, costs, Extras())
        print(f"{bench}/{algo:36s} 1048576 ranks  finish {ans.median * 1e6:12.2f} us  regime {ans.regime:10s}"
              f"  wall {time.perf_counter() - t0:6.1f} s")
    if a.loggopsim:
        with tempfile.TemporaryDirectory() as tmp:
            g = Path(tmp) / "s.goal"
            binary.schedule(["--bench", "allreduce", "--algo", "recursive_doubling", "-p", 4096, "--size", 8,
                             "--format", "goal", "-o", g])
            doc, wall = sim("--schedule", g)
            line("mpiscope-sim, allreduce/rd 4096 (GOAL)", doc, wall)
            loggopsim(a.loggopsim, g, tmp)


if __name__ == "__main__":
    main()
