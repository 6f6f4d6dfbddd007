# SPDX-License-Identifier: BSD-3-Clause
"""Where the CPU goes when an emulated cluster runs on one machine.

The same point-to-point run (pingpong and ring at 1 KiB and 64 KiB, 5 to 30
repetitions, a 2 s time budget per series, the default MPI) on an emulated
Fast Ethernet cluster of each --hosts count, one rank per host. For each
count the first table gives the run's wall time, the machine's CPU shares
while it ran (user, system, softirq, idle; of all cores, from /proc/stat),
and the CPU time of the run's own processes (ranks and launcher, getrusage
of the children) against wall time x cores; the second the run's medians.
With more busy-polling ranks than cores, the ranks, the kernel's packet
work for the links and everything else on the machine share the cores: the
shares say how much each got.

Needs root (emulated clusters are network namespaces); no peer tool.

To reproduce (as root; about half a minute per host count):

    .venv/bin/python bench/cluster_cpu.py --hosts 4,8 --json cluster-cpu.json
"""

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import benchjson

FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def mpiscope(*args):
    p = subprocess.run([sys.executable, "-m", "mpiscope.cli", *map(str, args)], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"mpiscope {' '.join(map(str, args))} failed:\n{p.stderr[-3000:]}")
    return p


def ticks():
    return [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]


def one(hosts, out):
    """The run on `hosts` emulated hosts: wall time, CPU shares, the run's own CPU time, medians."""
    name = f"cpu{os.getpid() % 10000}"
    mpiscope("cluster", "up", name, "--hosts", hosts, "--preset", "fast-ethernet")
    try:
        r0, t0, w0 = resource.getrusage(resource.RUSAGE_CHILDREN), ticks(), time.monotonic()
        mpiscope("run", "--cluster", name, "-n", hosts, "--bench", "pingpong,ring", "--sizes", "1K,64K",
                 "--reps-min", 5, "--reps-max", 30, "--time-budget", 2, "--out", out, "--label", f"cpu-{hosts}")
        wall, r1, t1 = time.monotonic() - w0, resource.getrusage(resource.RUSAGE_CHILDREN), ticks()
    finally:
        subprocess.run([sys.executable, "-m", "mpiscope.cli", "cluster", "down", name], capture_output=True)
    d = [b - a for a, b in zip(t0, t1)]
    shares = {k: v / max(1, sum(d)) for k, v in zip(FIELDS, d)}
    doc = json.loads(mpiscope("show", f"cpu-{hosts}", "--json", "--out", out).stdout)
    med = {(s["bench"], int(s["size"])): s["median"] for s in doc.get("series", doc.get("rows", []))
           if "median" in s}
    return {"hosts": hosts, "cores": os.cpu_count(), "wall_s": wall, "shares": shares,
            "run_user_s": r1.ru_utime - r0.ru_utime, "run_system_s": r1.ru_stime - r0.ru_stime,
            "medians_s": [{"bench": b, "size": size, "median_s": m} for (b, size), m in sorted(med.items())]}


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument("--hosts", default="4,8",
                    help="comma list of emulated host counts, one rank per host (default %(default)s)")
    a = benchjson.parse(ap)
    try:
        counts = [int(h) for h in a.hosts.split(",")]
    except ValueError:
        ap.error(f"--hosts expects a comma list of integers, got '{a.hosts}'")
    if os.geteuid() != 0:
        sys.exit("emulated clusters need root")
    with tempfile.TemporaryDirectory(prefix="cluster-cpu-") as out:
        got = [one(h, out) for h in counts]
    cpu = benchjson.show(
        "CPU while the run measured (machine shares of all cores; the run's own processes)",
        ["hosts", "cores", "wall s", "user %", "system %", "softirq %", "idle %", "run user s",
         "run system s", "run CPU % of wall x cores"],
        [[g["hosts"], g["cores"], g["wall_s"],
          *(100 * g["shares"][k] for k in ("user", "system", "softirq", "idle")),
          g["run_user_s"], g["run_system_s"],
          100 * (g["run_user_s"] + g["run_system_s"]) / (g["wall_s"] * g["cores"])] for g in got])
    medians = benchjson.show("medians of the run", ["hosts", "bench", "size B", "median us"],
                             [[g["hosts"], m["bench"], m["size"], m["median_s"] * 1e6]
                              for g in got for m in g["medians_s"]])
    benchjson.write(a, "cluster_cpu", [cpu, medians], {"runs": got}, mpi=benchjson.default_mpi())


if __name__ == "__main__":
    main()
