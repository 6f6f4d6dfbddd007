"""Where the CPU goes when an emulated cluster runs on this machine: the same
point-to-point run (pingpong and ring at 1 KiB and 64 KiB) on 4 and on 8
Fast Ethernet hosts, and for each the wall time, the machine's CPU shares
(user, system, softirq, idle: all cores), the CPU time of the run's own
processes (ranks, launcher; getrusage of the children) against wall × cores,
and the medians. With more busy-polling ranks than cores, the ranks, the
kernel's packet work for the links and everything else on the machine share
the cores: this prints how much. Needs root.

    flock /tmp/mpiscope-heavy.lock .venv/bin/python bench/cluster_cpu.py [--hosts 4,8]
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


def mpiscope(*args):
    p = subprocess.run([sys.executable, "-m", "mpiscope.cli", *map(str, args)], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"mpiscope {' '.join(map(str, args))} failed:\n{p.stderr[-3000:]}")
    return p


def ticks():
    return [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]


def one(hosts, out):
    name = f"cpu{os.getpid() % 10000}"
    mpiscope("cluster", "up", name, "--hosts", hosts, "--preset", "fast-ethernet")
    try:
        load = os.getloadavg()[0]
        r0, t0, w0 = resource.getrusage(resource.RUSAGE_CHILDREN), ticks(), time.monotonic()
        mpiscope("run", "--cluster", name, "-n", hosts, "--bench", "pingpong,ring", "--sizes", "1K,64K",
                 "--reps-min", 5, "--reps-max", 30, "--time-budget", 2, "--out", out, "--label", f"cpu-{hosts}")
        wall, r1, t1 = time.monotonic() - w0, resource.getrusage(resource.RUSAGE_CHILDREN), ticks()
    finally:
        subprocess.run([sys.executable, "-m", "mpiscope.cli", "cluster", "down", name], capture_output=True)
    d = [b - a for a, b in zip(t0, t1)]
    shares = {k: v / max(1, sum(d)) for k, v in zip(FIELDS, d)}
    ours_user, ours_sys = r1.ru_utime - r0.ru_utime, r1.ru_stime - r0.ru_stime
    doc = json.loads(mpiscope("show", f"cpu-{hosts}", "--json", "--out", out).stdout)
    med = {(s["bench"], int(s["size"])): s["median"] for s in doc.get("series", doc.get("rows", []))
           if "median" in s}
    cores = os.cpu_count()
    print(f"{hosts} hosts on {cores} cores (load average {load:.1f} before): wall {wall:.1f} s; machine: "
          + ", ".join(f"{k} {100 * shares[k]:.0f}%" for k in ("user", "system", "softirq", "idle"))
          + f"; the run's processes: user {ours_user:.1f} s + system {ours_sys:.1f} s = "
          f"{100 * (ours_user + ours_sys) / (wall * cores):.0f}% of wall × cores")
    for key in sorted(med):
        print(f"    {key[0]:9s} {key[1]:6d} B  median {med[key] * 1e6:10.1f} us")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", default="4,8")
    a = ap.parse_args()
    if os.geteuid() != 0:
        sys.exit("emulated clusters need root")
    with tempfile.TemporaryDirectory(prefix="cluster-cpu-") as out:
        for h in a.hosts.split(","):
            one(int(h), out)


if __name__ == "__main__":
    main()
