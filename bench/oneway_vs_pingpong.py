"""Does the one-way time on the global clock agree with half a round trip?

tests/test_engine_p2p.py asserts only what load cannot change (the fastest
one-way trip is no slower than the fastest round trip); this prints the
agreement itself, side by side over trials in one go: medians of 8-byte
`oneway` and `pingpong` (half round trips) on 2 Open MPI ranks and their
ratio (target: within 30% on an idle machine).

    flock /tmp/mpiscope-mpi.lock .venv/bin/python bench/oneway_vs_pingpong.py [--trials 5]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from mpiscope.store import samples
from mpiscope.store import ingest as store


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=5)
    args = ap.parse_args()
    env = dict(os.environ)
    env.pop("MPISCOPE_PROGRESS", None)
    print("trial   oneway (us)   half RTT (us)   oneway / half RTT   (medians; min in brackets)")
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.trials):
            p = subprocess.run([sys.executable, "-m", "mpiscope.cli", "run", "-n", "2", "--bench",
                                "pingpong,oneway", "--sizes", "8", "--reps-min", "200", "--json",
                                "--out", tmp], capture_output=True, text=True, env=env, check=True)
            table, _ = store.load(Path(json.loads(p.stdout)["run_dir"]))
            ow = samples.sample_values(table, "oneway", 8).values
            hr = samples.sample_values(table, "pingpong", 8).values
            ratios.append(np.median(ow) / np.median(hr))
            print(f"{k:5d}   {np.median(ow) * 1e6:7.2f} [{ow.min() * 1e6:5.2f}]   "
                  f"{np.median(hr) * 1e6:7.2f} [{hr.min() * 1e6:5.2f}]   {ratios[-1]:8.3f}")
    print(f"median ratio {np.median(ratios):.3f}")


if __name__ == "__main__":
    main()
