# SPDX-License-Identifier: BSD-3-Clause
"""The simulator's speed and scale, one run each (rates, sizes and
counts, not a timed test). Costs: LogGP, L 1.5 us, o 0.3 us, g 0.2 us,
G 0.1 ns/B. No MPI is started.

- Event rate on one core (simulation only, the schedule already held), on
  recursive-doubling allreduce at 2^16 ranks and ring allgather at 2^11
  ranks. Goal: >= 20 M events/s. With --baseline REF (repeatable), the
  same runs also by the simulator of git REF (native/sim/ and
  native/engine/ of that commit built in a temporary directory),
  alternating, median of three
  each: a change's before and after side by side. Every run's result (the
  finish of every rank, the counts) must equal this tree's, or the script
  stops. Without --baseline, one run of this tree each.
- Scale, wall time including generating the schedule, and peak memory:
  binomial broadcast at 2^23 ranks (goal <= 30 s, <= 8 GiB) and
  recursive-doubling allreduce at 2^20 ranks (goal <= 60 s); with --small
  2^20 and 2^16 ranks.
- A million ranks, ~10^12 messages: ring allgather and pairwise alltoall
  at 2^20 ranks, answered by symmetry (rank 0 simulated for all).
- With --loggopsim PATH, LogGOPSim beside ours on the same GOAL files
  (bench/sim_vs_loggopsim.py); without it that part is skipped.

One table per part: schedule, ranks, operations, events, the finish time
(the makespan, us), events per second, wall time and peak memory, and
per baseline its rate and this tree's speed-up over it.

To reproduce (a few minutes; --small about a minute):

    .venv/bin/python bench/sim_speed.py --json sim-speed.json
    .venv/bin/python bench/sim_speed.py --baseline REF --loggopsim PATH/LogGOPSim --json sim-speed.json
"""

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from mpiscope.sim import binary  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import benchjson  # noqa: E402

# LogGP-like costs (s, s/B): L 1.5 µs, o 0.3 µs, g 0.2 µs, G 0.1 ns/B
COSTS = ["--L", "1.5e-6", "--o-s", "3e-7", "--o-r", "3e-7", "--g", "2e-7", "--G", "1e-10"]


def sim(*argv):
    t0 = time.perf_counter()
    doc = binary.simulate([*map(str, argv), *COSTS])
    return doc, time.perf_counter() - t0


def row(name, doc, wall, goal=None):
    """One simulation as a table row (see SCALE_COLUMNS)."""
    return [name, doc["nranks"], doc["nops"], doc["events"], doc["makespan_median_s"] * 1e6,
            doc["events_per_s"] / 1e6, wall, doc["peak_rss_bytes"] / 2 ** 30, *([goal] if goal else [])]


SCALE_COLUMNS = ["schedule", "ranks", "operations", "events", "finish us", "M events/s", "wall s", "peak GiB"]


def build_baseline(ref, tmp):
    """The simulator of git REF, built in tmp; None (and why) if it cannot be."""
    root = Path(__file__).resolve().parents[1]
    if subprocess.run(["git", "-C", root, "cat-file", "-e", f"{ref}^{{commit}}"], capture_output=True).returncode:
        return None, f"{ref} is not a commit of this repository"
    src = Path(tmp) / "baseline"
    src.mkdir()
    # REF's C programs lie under native/, or at its top where REF has no native/.
    native = subprocess.run(["git", "-C", root, "cat-file", "-e", f"{ref}:native"], capture_output=True).returncode
    top = "" if native else "native/"
    arc = subprocess.run(["git", "-C", root, "archive", ref, f"{top}sim", f"{top}engine"], capture_output=True,
                         check=True).stdout
    subprocess.run(["tar", "x", "-C", src], input=arc, check=True)
    p = subprocess.run(["make", "-s", "-C", src / top / "sim", f"BUILD={src / 'build'}"], capture_output=True,
                       text=True)
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
    ap = benchjson.parser(__doc__)
    ap.add_argument("--small", action="store_true",
                    help="scale runs at 2^20 and 2^16 ranks instead of 2^23 and 2^20; LogGOPSim's "
                         "speed runs at 2^12 ranks at most")
    ap.add_argument("--baseline", metavar="REF", action="append",
                    help="a git commit (hash, tag or branch) whose simulator's event rates are measured "
                         "beside this tree's; repeat to run several (default: none)")
    ap.add_argument("--loggopsim", metavar="PATH", help="LogGOPSim's binary, built from its public source")
    ap.add_argument("--txt2bin", metavar="PATH", help="LogGOPSim's txt2bin (default: beside --loggopsim)")
    a = benchjson.parse(ap)
    binary.ensure_built()
    refs = a.baseline or []
    skipped = {}
    with tempfile.TemporaryDirectory() as tmp:
        built = []
        for ref in refs:
            (Path(tmp) / ref.replace("/", "_")).mkdir()
            exe, why = build_baseline(ref, Path(tmp) / ref.replace("/", "_"))
            if exe is None:
                skipped[ref] = why.strip()
                print(f"skipped: baseline {ref}: {why.strip()}", flush=True)
            else:
                built.append((ref, str(exe)))
        rate_rows, rate_docs = [], []
        for bench, algo, p, size in (("allreduce", "recursive_doubling", 1 << 16, 8),
                                     ("allgather", "ring", 1 << 11, 8)):
            argv = ["--bench", bench, "--algo", algo, "-p", p, "--size", size]
            if not built:
                doc, wall = sim(*argv)
                rate_rows.append(row(f"{bench}/{algo}", doc, wall)[:6])
                rate_docs.append(doc)
                continue
            rates, doc = before_after([exe for _, exe in built], argv)
            after = rates[-1]
            rate_rows.append([f"{bench}/{algo}", doc["nranks"], doc["nops"], doc["events"],
                              doc["makespan_median_s"] * 1e6, after / 1e6,
                              *(x for r in rates[:-1] for x in (r / 1e6, after / r))])
            rate_docs.append(doc)
    tables = [benchjson.show(
        "event rate (simulation only, one core)",
        [*SCALE_COLUMNS[:6], *(c for ref, _ in built for c in (f"M events/s {ref}", f"speed-up over {ref}"))],
        rate_rows,
        ["goal: >= 20 M events/s",
         "an event is one entry taken from the event queue: an operation ready (skewed starts only), one done,",
         "a message at its receiver as if alone or through shared links, a receive's CPU part, a clear-to-send,",
         "rendezvous data; operations that start when what they require is done start at once, without an event",
         "medians of 3 runs alternating with the baselines', every rank's finish the same in each"
         if built else "one run of this tree (no --baseline given)"])]
    big = [("bcast", "binomial", 1 << (20 if a.small else 23), 8, "<= 30 s, <= 8 GiB at 2^23"),
           ("allreduce", "recursive_doubling", 1 << (16 if a.small else 20), 8, "<= 60 s at 2^20")]
    scale_rows = []
    for bench, algo, p, size, goal in big:
        doc, wall = sim("--bench", bench, "--algo", algo, "-p", p, "--size", size)
        scale_rows.append(row(f"{bench}/{algo}", doc, wall, goal))
    tables.append(benchjson.show("scale (wall time includes generating the schedule)",
                                 [*SCALE_COLUMNS, "goal"], scale_rows))
    from mpiscope.sim.costs import SimCosts
    from mpiscope.sim.simulate import Extras, algorithm
    costs = SimCosts(L=1.5e-6, o_s=3e-7, o_r=3e-7, g=2e-7, G=1e-10)
    million = []
    for bench, algo in (("allgather", "ring"), ("alltoall", "pairwise")):
        t0 = time.perf_counter()
        ans = algorithm(bench, algo, 1 << 20, 8, costs, Extras())
        million.append([f"{bench}/{algo}", 1 << 20, ans.median * 1e6, ans.regime, time.perf_counter() - t0])
    tables.append(benchjson.show("a million ranks, ~10^12 messages (the regime that answered)",
                                 ["schedule", "ranks", "finish us", "regime", "wall s"], million))
    import sim_vs_loggopsim

    lgs_tables, lgs = sim_vs_loggopsim.compare(a.loggopsim, a.txt2bin, a.small)
    tables += lgs_tables
    benchjson.write(a, "sim_speed", tables,
                    {"event_rate": [{k: v for k, v in d.items() if not isinstance(v, (list, dict))}
                                    for d in rate_docs],
                     "baselines_skipped": skipped, "scale": benchjson.records(tables[1]),
                     "million_ranks": benchjson.records(tables[2]), "loggopsim": lgs})


if __name__ == "__main__":
    main()
