"""How closely does `mpiscope loggp` recover an injected overhead?

The engine's test hook MPISCOPE_TEST_FAKE_OVERHEAD_US=x replaces the operation
under test of the `overhead` benchmark by a spin timed to last x us, so o_s and
o_r should come out as x. A spin can only be lengthened by load, never
shortened: tests/test_loggp_mpi.py asserts the floor (o >= 0.9 x); this script
prints how far above it the estimates land on this machine now, side by side
for several x in one run (target: within 10% on an idle machine).

    flock /tmp/mpiscope-mpi.lock .venv/bin/python bench/loggp_fake_overhead.py [--us 2,5,20] [--trials 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

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
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--us", default="2,5,20", help="injected overheads in microseconds")
    ap.add_argument("--trials", type=int, default=3)
    args = ap.parse_args()
    print("injected   o_s (us)  o_s/injected   o_r (us)  o_r/injected   (medians over trials)")
    with tempfile.TemporaryDirectory() as tmp:
        for us in (float(x) for x in args.us.split(",")):
            got = [recovered(us, tmp) for _ in range(args.trials)]
            o_s = statistics.median(g[0] for g in got) * 1e6
            o_r = statistics.median(g[1] for g in got) * 1e6
            print(f"{us:8.1f}   {o_s:8.2f}  {o_s / us:12.3f}   {o_r:8.2f}  {o_r / us:12.3f}")


if __name__ == "__main__":
    main()
