"""Simulated against measured on an 8-host emulated cluster, at Fast
Ethernet and at GigE: every algorithm of allgather, allreduce and bcast at
three sizes, measured in one run with the point-to-point benchmarks
(pingpong, ring), then simulated with costs from that run (`mpiscope sim
check`: per-message times drawn from the run's ring distributions, 20
replicates). Prints the table, the share of cells whose simulated median is
within 15% of measured (goal >= 90%) and Kendall τ of the algorithms' order
per collective and size (goal >= 0.8). Needs root; a few minutes.

    flock /tmp/mpiscope-heavy.lock .venv/bin/python bench/sim_validate.py [--hosts 8] [--p2p ring|pingpong]
        [--keep DIR]   (then: mpiscope sim check validate-fast-ethernet --out DIR ... with other options)
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

SIZES = "1K,16K,64K"
BENCHES = "pingpong,ring,allgather,allreduce,bcast"


def mpiscope(*args, check=True):
    p = subprocess.run([sys.executable, "-m", "mpiscope.cli", *map(str, args)], capture_output=True, text=True)
    if check and p.returncode != 0:
        sys.exit(f"mpiscope {' '.join(map(str, args))} failed:\n{p.stderr[-3000:]}")
    return p


def validate(preset, hosts, p2p, out, reps_max=30):
    name = f"val{os.getpid() % 10000}"
    mpiscope("cluster", "up", name, "--hosts", hosts, "--preset", preset)
    try:
        mpiscope("run", "--cluster", name, "-n", hosts, "--bench", BENCHES, "--algo", "all", "--sizes", SIZES,
                 "--reps-min", 5, "--reps-max", reps_max, "--time-budget", 2, "--label", f"validate-{preset}",
                 "--out", out)
    finally:
        mpiscope("cluster", "down", name, check=False)
    doc = json.loads(mpiscope("sim", "check", f"validate-{preset}", "--p2p", p2p, "--sample",
                              "--replicates", 20, "--json", "--out", out).stdout)
    rows = [r for r in doc["rows"]]
    print(f"\n{preset}, {hosts} hosts (run {doc['run_id']}), costs from its {p2p}:")
    print(f"{'bench':10s} {'algorithm':38s} {'size':>6s} {'measured us':>12s} {'simulated us':>13s} {'error':>8s}")
    for r in rows:
        print(f"{r['bench']:10s} {r['algo']:38s} {r['size']:6d} {r['measured_s'] * 1e6:12.1f} "
              f"{r['simulated_s'] * 1e6:13.1f} {100 * r['rel_error']:+7.1f}%")
    print(f"within 15%: {100 * doc['within_15pct']:.0f}% of {len(rows)} cells (goal >= 90%)")
    for k in doc["rankings"]:
        tau = "-" if k["kendall_tau"] is None else f"{k['kendall_tau']:.2f}"
        print(f"  {k['bench']:10s} {k['size']:6d}  τ = {tau:>5s} (goal >= 0.8)  best measured "
              f"{k['best_measured']}, simulated {k['best_simulated']}")
    return doc


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, default=8)
    ap.add_argument("--reps-max", type=int, default=30)
    ap.add_argument("--p2p", choices=("ring", "pingpong"), default="ring")  # ring: see README "Measured here"
    ap.add_argument("--presets", default="fast-ethernet,gige")
    ap.add_argument("--keep", metavar="DIR", help="store the runs here (default: a temporary directory)")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("emulated clusters need root")
    with tempfile.TemporaryDirectory(prefix="sim-validate-") as tmp:
        out = Path(a.keep or tmp)
        docs = [validate(p, a.hosts, a.p2p, out, a.reps_max) for p in a.presets.split(",")]
    cells = sum(len(d["rows"]) for d in docs)
    within = sum(d["within_15pct"] * len(d["rows"]) for d in docs) / cells
    taus = [k["kendall_tau"] for d in docs for k in d["rankings"] if k["kendall_tau"] is not None]
    print(f"\nall: {100 * within:.0f}% of {cells} cells within 15%; Kendall τ >= 0.8 in "
          f"{sum(t >= 0.8 for t in taus)} of {len(taus)} collective × size")


if __name__ == "__main__":
    main()
