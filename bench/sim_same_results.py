# SPDX-License-Identifier: BSD-3-Clause
"""Does the simulator of this tree give the same results as the one of
--baseline REF? For checking that a change meant to make the simulator
faster (or its code clearer) changes none of its answers.

Builds the simulator of REF (native/sim/ and native/engine/ of that commit, in a
temporary directory) and runs both on the same configurations: every
algorithm of our own, many p (powers of two and others), three sizes, seven
cost settings (LogGP, rendezvous with O and gamma, Hockney, sender/receiver
costs, a two-switch topology, measured quantiles with replicates, drawn
start skew), rank symmetry, and two schedules that deadlock. Each run's
JSON (timings left out), the finish of every rank, the trace CSV, the
critical path and the error messages must be equal byte for byte.

Prints each configuration that differs, then a table with the count of
configurations and of differences. Exit code 0 when none differs, 1 when
any does, 2 for bad input or a REF that cannot be built. No MPI is started.

To reproduce (REF: the commit to compare with, e.g. the last release's tag;
about ten minutes, --quick a few):

    .venv/bin/python bench/sim_same_results.py --baseline REF --json sim-same-results.json
"""

import itertools
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from mpiscope.sim import binary  # noqa: E402
from sim_speed import TIMING, build_baseline  # noqa: E402

import benchjson  # noqa: E402

ALGOS = {
    "allreduce": ["recursive_doubling", "rabenseifner", "ring", "fan_in_fan_out"],
    "allgather": ["ring", "recursive_doubling", "bruck", "fan_in_fan_out", "repeated_binary_tree", "pipeline",
                  "full_fan_in", "full_fan_out"],
    "bcast": ["binomial", "scatter_allgather_recursive_doubling", "scatter_allgather_ring", "pipelined_chain"],
    "alltoall": ["linear", "pairwise", "bruck"],
    "reduce_scatter_block": ["recursive_halving", "pairwise", "ring", "repeated_binary_tree", "pipeline",
                             "full_fan_in", "full_fan_out"],
}
LOGGP = ["--L", "1.5e-6", "--o-s", "3e-7", "--o-r", "3e-7", "--g", "2e-7", "--G", "1e-10"]
# Two schedules that never finish: a receive without its send, and operations that wait for it.
UNMATCHED = ("num_ranks 2\nrank 0 {\nl1: calc 100\nl2: send 8b to 1 tag 3\nl3: recv 8b from 1 tag 4\n"
             "l2 requires l1\n}\nrank 1 {\nl1: recv 8b from 0 tag 3\nl2: recv 8b from 0 tag 5\n}\n")
STUCK = ("num_ranks 3\nrank 0 {\nl1: calc 100\nl2: send 8b to 1 tag 3\n}\nrank 1 {\nl1: recv 8b from 0 tag 3\n"
         "l2: recv 8b from 2 tag 5\nl3: calc 5\nl4: send 8b to 2 tag 1\nl3 requires l2\nl4 requires l3\n}\n"
         "rank 2 {\nl1: calc 1\nl2: recv 8b from 1 tag 1\nl2 requires l1\n}\n")


def run(exe, argv, trace):
    """Exit code, JSON without timings, stderr and trace CSV of one run."""
    p = subprocess.run([exe, "run", *argv, "--trace", trace], capture_output=True, text=True)
    out = p.stdout
    if p.returncode == 0:
        out = json.dumps({k: v for k, v in json.loads(out).items() if k not in TIMING})
    csv = Path(trace).read_text() if Path(trace).exists() else ""
    Path(trace).unlink(missing_ok=True)
    return p.returncode, out, p.stderr, csv


def configurations(tmp, quick):
    dist, pool = Path(tmp) / "dist.txt", Path(tmp) / "pool.txt"
    dist.write_text("3\n8 1e-6 2e-6 5e-6\n65536 2e-5 3e-5 9e-5\n")
    pool.write_text("0 1e-6 3e-6 2.5e-6 7e-7\n")
    costs = [LOGGP, LOGGP + ["--S", "1024", "--O", "1e-11", "--gamma", "1e-10"],
             ["--alpha-s", "2e-6", "--beta-s", "1e-9"],
             ["--alpha-s", "1e-6", "--beta-s", "5e-10", "--alpha-r", "7e-7", "--beta-r", "2e-10", "--L", "1e-6",
              "--gamma", "3e-10"],
             LOGGP + ["--ranks-per-host", "2", "--hosts-per-switch", "2", "--uplink-G", "4e-10"],
             ["--dist", str(dist), "--replicates", "3", "--L", "1e-6", "--o-s", "2e-7"],
             LOGGP + ["--skew", str(pool), "--replicates", "2"]]
    ps = [2, 3, 5, 8, 13, 16, 33] if quick else [1, 2, 3, 5, 7, 8, 12, 13, 16, 31, 33, 64, 100]
    sizes = [8, 65536] if quick else [8, 1000, 65536]
    for bench, algos in ALGOS.items():
        for algo, p, size, c in itertools.product(algos, ps, sizes, costs):
            yield ["--bench", bench, "--algo", algo, "-p", str(p), "--size", str(size), *c, "--per-rank",
                   "--critical-path", "40"]
    for (bench, algo), p in itertools.product((("allgather", "ring"), ("alltoall", "pairwise"),
                                               ("allreduce", "ring")), (4, 64, 1000)):
        yield ["--bench", bench, "--algo", algo, "-p", str(p), "--size", "8", *LOGGP, "--symmetric",
               "--critical-path", "10"]
    for name, text in (("unmatched", UNMATCHED), ("stuck", STUCK)):
        (Path(tmp) / f"{name}.goal").write_text(text)
        yield ["--schedule", str(Path(tmp) / f"{name}.goal"), *LOGGP]


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument("--baseline", metavar="REF", required=True,
                    help="the git commit (hash, tag or branch of this repository) whose simulator "
                         "to compare with")
    ap.add_argument("--quick", action="store_true", help="fewer p and sizes")
    a = benchjson.parse(ap)
    now = str(binary.ensure_built())
    differ = []
    with tempfile.TemporaryDirectory() as tmp:
        before, why = build_baseline(a.baseline, tmp)
        if before is None:
            ap.error(f"--baseline {a.baseline}: cannot build its simulator: {why.strip()}")
        n = 0
        for argv in configurations(tmp, a.quick):
            n += 1
            if run(str(before), argv, f"{tmp}/a.csv") != run(now, argv, f"{tmp}/b.csv"):
                differ.append(" ".join(argv))
                print("differs:", differ[-1], flush=True)
    t = benchjson.show(f"the simulator of this tree against {a.baseline}",
                       ["baseline", "configurations", "differ"], [[a.baseline, n, len(differ)]])
    benchjson.write(a, "sim_same_results", [t], {"configurations": n, "differ": differ})
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
