# SPDX-License-Identifier: BSD-3-Clause
"""How closely does `mpiscope loggp` recover an injected overhead?

The engine's test hook MPISCOPE_TEST_FAKE_OVERHEAD_US=x replaces the operation
under test of the `overhead` benchmark by a spin timed to last x us, so o_s and
o_r should come out as x. Each trial is one `mpiscope run` of the overhead
benchmark (2 ranks, the default MPI, 8 bytes, a 0.3 s time budget, 5
overhead steps) analysed by the LogGP fit (200 bootstrap resamples).

The table gives, per injected overhead, the median over the trials of the
recovered o_s and o_r in microseconds and each divided by the injected
value. A spin can only be lengthened by load, never shortened:
tests/mpi/test_loggp_mpi.py asserts the floor (o >= 0.9 x); this script shows
how far above it the estimates land, side by side for several x in one run.
Target: within 10% (a ratio of 0.9-1.1) on an otherwise idle machine.

To reproduce (a few seconds per trial, under a minute with the defaults):

    .venv/bin/python bench/loggp_fake_overhead.py --us 2,5,20 --trials 3 --json loggp-fake-overhead.json
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import benchjson
from mpiscope.models.loggp import loggp_run


def recovered(us, tmp):
    env = {**os.environ, "MPISCOPE_TEST_FAKE_OVERHEAD_US": str(us)}
    env.pop("MPISCOPE_PROGRESS", None)
    p = subprocess.run([sys.executable, "-m", "mpiscope.cli", "run", "-n", "2", "--bench", "overhead",
                        "--sizes", "8", "--time-budget", "0.3", "--overhead-steps", "0,1,2,3,6", "--json", "--out", str(tmp)],
                       capture_output=True, text=True, env=env, check=True)
    r = loggp_run(Path(json.loads(p.stdout)["run_dir"]), n_boot=200)
    return tuple(r.params[k].point if r.params[k] else float("nan") for k in ("o_s", "o_r"))


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument("--us", default="2,5,20",
                    help="comma list of injected overheads in microseconds (default %(default)s)")
    ap.add_argument("--trials", type=int, default=3,
                    help="runs per injected overhead; the medians are printed (default %(default)s)")
    args = benchjson.parse(ap)
    try:
        injected = [float(x) for x in args.us.split(",")]
    except ValueError:
        ap.error(f"--us expects a comma list of numbers, got '{args.us}'")
    if args.trials < 1:
        ap.error(f"--trials must be at least 1, got {args.trials}")
    rows, results = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for us in injected:
            got = [recovered(us, tmp) for _ in range(args.trials)]
            results[us] = [{"o_s_s": g[0], "o_r_s": g[1]} for g in got]
            o_s = statistics.median(g[0] for g in got) * 1e6
            o_r = statistics.median(g[1] for g in got) * 1e6
            rows.append([us, o_s, o_s / us, o_r, o_r / us])
    t = benchjson.show(f"recovered overheads, median over {args.trials} trials",
                       ["injected us", "o_s us", "o_s / injected", "o_r us", "o_r / injected"], rows,
                       ["target: within 10% of the injected overhead"])
    benchjson.write(args, "loggp_fake_overhead", [t], {"trials": results}, mpi=benchjson.default_mpi())


if __name__ == "__main__":
    main()
