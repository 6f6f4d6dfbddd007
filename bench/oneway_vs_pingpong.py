# SPDX-License-Identifier: BSD-3-Clause
"""Does the one-way time on the global clock agree with half a round trip?

tests/mpi/test_engine_p2p.py asserts only what load cannot change (the fastest
one-way trip is no slower than the fastest round trip); this script shows
the agreement itself. Each trial is one `mpiscope run` of 8-byte `oneway`
and `pingpong` (half round trips) on 2 ranks of the default MPI, at least
200 repetitions each.

The table gives per trial the median and the least of each, in
microseconds, and the ratio of the medians oneway / half round trip; the
last row the median of those ratios.
Target: the ratio within 30% of 1 on an otherwise idle machine.

To reproduce (a few seconds per trial, under a minute with the defaults):

    .venv/bin/python bench/oneway_vs_pingpong.py --trials 5 --json oneway-vs-pingpong.json
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import benchjson
from mpiscope.store import samples
from mpiscope.store import ingest as store


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument("--trials", type=int, default=5,
                    help="runs, each measuring both (default %(default)s)")
    args = benchjson.parse(ap)
    if args.trials < 1:
        ap.error(f"--trials must be at least 1, got {args.trials}")
    env = dict(os.environ)
    env.pop("MPISCOPE_PROGRESS", None)
    ratios, rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.trials):
            p = subprocess.run([sys.executable, "-m", "mpiscope.cli", "run", "-n", "2", "--bench",
                                "pingpong,oneway", "--sizes", "8", "--reps-min", "200", "--json",
                                "--out", tmp], capture_output=True, text=True, env=env, check=True)
            table, _ = store.load(Path(json.loads(p.stdout)["run_dir"]))
            ow = samples.sample_values(table, "oneway", 8).values
            hr = samples.sample_values(table, "pingpong", 8).values
            ratios.append(float(np.median(ow) / np.median(hr)))
            rows.append([k + 1, float(np.median(ow)) * 1e6, float(ow.min()) * 1e6,
                         float(np.median(hr)) * 1e6, float(hr.min()) * 1e6, ratios[-1]])
            print(f"trial {k + 1}/{args.trials} done", file=sys.stderr)
    rows.append(["median", None, None, None, None, float(np.median(ratios))])
    t = benchjson.show("8 bytes, one-way on the global clock against half a round trip",
                       ["trial", "oneway median us", "oneway min us", "half RTT median us",
                        "half RTT min us", "oneway / half RTT"], rows,
                       ["target: the ratio of the medians within 30% of 1"])
    benchjson.write(args, "oneway_vs_pingpong", [t], {"trials": benchjson.records(t)[:-1],
                                                      "median_ratio": float(np.median(ratios))},
                    mpi=benchjson.default_mpi())


if __name__ == "__main__":
    main()
