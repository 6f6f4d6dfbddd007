"""Does the engine's harness add anything to what it measures?

Runs, alternately and several times, a minimal hand-written 8-byte ping-pong
loop (bench/minimal_pingpong.c, timed as a whole like osu_latency) and the
engine's pingpong at 8 bytes on the same 2 Open MPI ranks, and prints the
ratio engine / minimal of the medians over the trials. Target: <= 1.02.

    .venv/bin/python bench/harness_overhead.py [--trials 7]
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from mpiscope import launch, samples, store
from mpiscope.build import REPO, ensure_engine


def build_minimal():
    out = REPO / "build" / "bench" / "minimal_pingpong"
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mpicc.openmpi", "-O2", "-o", str(out), str(REPO / "bench" / "minimal_pingpong.c")],
                   check=True)
    return out


def minimal_us(binary, iters):
    cmd = ["mpirun.openmpi", "-n", "2", "--bind-to", "core", str(binary), str(iters)]
    out = subprocess.run(cmd, env=launch.launch_env("openmpi"), capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def engine_us(out_root, sync):
    cmd = [sys.executable, "-m", "mpiscope.cli", "run", "-n", "2", "--bench", "pingpong", "--sizes", "8",
           "--sync", sync, "--reps-min", "20000", "--ci-width", "0.005", "--json", "--out", str(out_root)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    table, _ = store.load(json.loads(out.stdout)["run"])
    return float(np.median(samples.sample_values(table, "pingpong", 8).values)) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=7)
    ap.add_argument("--iters", type=int, default=100000)
    args = ap.parse_args()
    ensure_engine("openmpi")
    binary = build_minimal()
    rows = {"minimal loop": [], "engine (window)": [], "engine (barrier)": []}
    with tempfile.TemporaryDirectory() as tmp:
        for t in range(args.trials):
            rows["minimal loop"].append(minimal_us(binary, args.iters))
            rows["engine (window)"].append(engine_us(Path(tmp), "window"))
            rows["engine (barrier)"].append(engine_us(Path(tmp), "barrier"))
            print(f"trial {t + 1}/{args.trials}: " + ", ".join(f"{k} {v[-1]:.3f} us" for k, v in rows.items()),
                  file=sys.stderr)
    base = statistics.median(rows["minimal loop"])
    print(f"{'8-byte half round trip':<22} {'median us':>10} {'ratio':>7}")
    for name, values in rows.items():
        m = statistics.median(values)
        print(f"{name:<22} {m:>10.3f} {m / base:>7.3f}")


if __name__ == "__main__":
    main()
