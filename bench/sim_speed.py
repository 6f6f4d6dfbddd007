"""The simulator's speed and scale, one run each (ratios and counts, not a
timed test):

  events per second on one core (simulation only, schedule already held;
  goal >= 20 M/s), on recursive-doubling allreduce at 2^16 ranks and ring
  allgather at 2^11 ranks; binomial broadcast at 2^23 ranks (goal <= 30 s,
  <= 8 GiB) and recursive-doubling allreduce at 2^20 ranks (goal <= 60 s),
  wall time including generating the schedule, and peak memory; ring
  allgather and pairwise alltoall at 2^20 ranks (~10^12 messages), answered
  by symmetry (rank 0 simulated for all).

Before/after: the event rates are measured side by side against the
simulator of --baseline REF (default 3e7e1fd, before the speed work of
issue 13; repeatable: sim/ and engine/ of each commit built in a temporary
folder), alternating runs, median of three each. Every run's result (the
finish of every rank, the counts) must equal this tree's, or the bench stops.

With --loggopsim PATH (a LogGOPSim binary made by hand, never committed; its
txt2bin beside it or given by --txt2bin) the same GOAL files run in both and
both finish times and event rates are printed (bench/sim_vs_loggopsim.py).

    flock /tmp/mpiscope-heavy.lock .venv/bin/python bench/sim_speed.py [--small] [--baseline REF ...]
        [--loggopsim PATH [--txt2bin PATH]]
"""

import argparse
import json
import statistics
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


def build_baseline(ref, tmp):
    """The simulator of git REF, built in tmp; None (and why) if it cannot be."""
    root = Path(__file__).resolve().parents[1]
    if subprocess.run(["git", "-C", root, "cat-file", "-e", f"{ref}^{{commit}}"], capture_output=True).returncode:
        return None, f"{ref} is not a commit here"
    src = Path(tmp) / "baseline"
    src.mkdir()
    arc = subprocess.run(["git", "-C", root, "archive", ref, "sim", "engine"], capture_output=True, check=True).stdout
    subprocess.run(["tar", "x", "-C", src], input=arc, check=True)
    p = subprocess.run(["make", "-s", "-C", src / "sim", f"BUILD={src / 'build'}"], capture_output=True, text=True)
    exe = src / "build" / "mpiscope-sim"
    return (exe, "") if p.returncode == 0 and exe.exists() else (None, p.stderr[-500:])


# What a run's own speed is, not its result: left out when results are compared.
TIMING = ("load_s", "simulate_s", "events_per_s", "peak_rss_bytes")


def run_binary(exe, argv):
    p = subprocess.run([exe, "run", *map(str, argv), *COSTS, "--per-rank"], capture_output=True, text=True,
                       check=True)
    return json.loads(p.stdout)


def result_of(doc):
    """Everything the simulator answered (finish per rank, counts), without its timings."""
    return {k: v for k, v in doc.items() if k not in TIMING}


def before_after(exes_before, argv, repeats=3):
    """Median event rates of each baseline and of this tree, runs alternating; the docs of this tree.
    Stops if any run's result differs from this tree's in any field (finish of every rank included)."""
    exes = [*exes_before, str(binary.ensure_built())]
    rates = [[] for _ in exes]
    docs = [None] * len(exes)
    for _ in range(repeats):
        for k, exe in enumerate(exes):
            docs[k] = run_binary(exe, argv)
            rates[k].append(docs[k]["events_per_s"])
        for exe, doc in zip(exes, docs):
            if result_of(doc) != result_of(docs[-1]):
                raise SystemExit(f"{exe} and this tree disagree on {argv}")
    return [statistics.median(r) for r in rates], docs[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="scale runs at 2^20 / 2^16 ranks only")
    ap.add_argument("--baseline", metavar="REF", action="append",
                    help="git commit whose simulator gives 'before' event rates (default 3e7e1fd; repeat to"
                         " run several beside this tree)")
    ap.add_argument("--loggopsim", metavar="PATH", help="LogGOPSim's binary, built by hand (never committed)")
    ap.add_argument("--txt2bin", metavar="PATH", help="LogGOPSim's txt2bin (default: beside --loggopsim)")
    a = ap.parse_args()
    binary.ensure_built()
    print("event rate (simulation only; goal >= 20 M events/s). An event is one entry taken from the event"
          " queue:\n  an operation ready (skewed starts only), one done, a message at its receiver as if alone"
          " or through\n  shared links, a receive's CPU part, a clear-to-send, rendezvous data. Operations that"
          " start when what\n  they require is done start at once, without an event of their own.")
    refs = a.baseline or ["3e7e1fd"]
    with tempfile.TemporaryDirectory() as tmp:
        built = []
        for ref in refs:
            (Path(tmp) / ref).mkdir()
            exe, why = build_baseline(ref, Path(tmp) / ref)
            if exe is None:
                print(f"  baseline {ref} skipped: {why.strip()}")
            else:
                built.append((ref, str(exe)))
        for bench, algo, p, size in (("allreduce", "recursive_doubling", 1 << 16, 8),
                                     ("allgather", "ring", 1 << 11, 8)):
            argv = ["--bench", bench, "--algo", algo, "-p", p, "--size", size]
            if not built:
                doc, wall = sim(*argv)
                line(f"{bench}/{algo}", doc, wall, "(no baseline beside it)")
                continue
            rates, doc = before_after([exe for _, exe in built], argv)
            after = rates[-1]
            befores = "  ".join(f"before ({ref}) {r / 1e6:6.1f} M/s x{after / r:4.2f}"
                                for (ref, _), r in zip(built, rates))
            print(f"{bench + '/' + algo:44s} {p:>9d} ranks {doc['events']:>11d} events  {befores}  after"
                  f" {after / 1e6:6.1f} M/s  (every rank's finish the same, last {doc['makespan_median_s'] * 1e6:.4f}"
                  f" us; median of 3 alternating runs)")
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
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import sim_vs_loggopsim

    sim_vs_loggopsim.compare(a.loggopsim, a.txt2bin, a.small)


if __name__ == "__main__":
    main()
