# SPDX-License-Identifier: BSD-3-Clause
"""The delay program (native/cluster/delayd.c): build, start, stop, read its report."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.cluster import helpers, netns as ns

RT_PRIORITY = 10  # it only ever sleeps on timers, so real-time priority starves nobody


def ensure_built() -> Path:
    """Returns the delay program, (re)building it when its source changed."""
    if not Path("/usr/include/libnetfilter_queue/libnetfilter_queue.h").exists():
        raise UsageError(
            "libnetfilter-queue-dev is not installed; run 'make setup' or apt-get install libnetfilter-queue-dev"
        )
    return helpers.ensure(helpers.DELAYD)


def start(binary, queues, stats_path: Path, log_path: Path, seed=1, mtu=1500):
    """Starts the program for `queues` [(netns name, queue, delay ns, jitter ns, rate bit/s)].

    Returns (pid, start time). It forks into the background once every
    queue is bound, so the rules that feed the queues can go in afterwards.
    """
    argv = [str(binary), "--daemon", "--rt-prio", str(RT_PRIORITY), "--seed", str(seed), "--mtu", str(mtu)]
    argv += ["--stats", str(stats_path)]
    for netns, queue, delay_ns, jitter_ns, rate_bps in queues:
        argv += ["--queue", f"{ns.netns_path(netns)}:{queue}:{delay_ns}:{jitter_ns}:{rate_bps}"]
    with open(log_path, "ab") as log:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, text=True, timeout=30)
    words = p.stdout.split()
    if p.returncode != 0 or len(words) != 2 or words[0] != "ready":
        tail = log_path.read_text(errors="replace").strip().splitlines()[-3:]
        raise ns.ClusterError(f"the delay program did not start: {' '.join(tail) or p.returncode}")
    pid = int(words[1])
    return pid, ns.start_time(pid)


def stop(pid, started, timeout=3.0):
    """SIGTERM: it lets held packets go, writes its report and exits."""
    if not ns.alive(pid, started):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and ns.alive(pid, started):
        time.sleep(0.02)
    if ns.alive(pid, started):
        os.kill(pid, signal.SIGKILL)


def report(pid, started, stats_path: Path, timeout=2.0):
    """Asks the running program for a fresh report; returns it parsed (or the last one)."""
    before = stats_path.stat().st_mtime_ns if stats_path.exists() else 0
    if ns.alive(pid, started):
        os.kill(pid, signal.SIGUSR1)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if stats_path.exists() and stats_path.stat().st_mtime_ns != before:
                break
            time.sleep(0.01)
    if not stats_path.exists():
        return None
    try:
        return json.loads(stats_path.read_text())
    except json.JSONDecodeError:
        return None


def summarize(stats) -> dict | None:
    """One line's worth: packets, and how far actual delays strayed from the target."""
    if not stats:
        return None
    qs = [q for q in stats.get("queues", []) if q["packets"]]
    n = sum(q["packets"] for q in qs)
    if not n:
        return {"packets": 0}
    mean = sum(q["error_mean_ns"] * q["packets"] for q in qs) / n
    return {
        "packets": n,
        "error_mean_s": mean / 1e9,
        "error_min_s": min(q["error_min_ns"] for q in qs) / 1e9,
        "error_max_s": max(q["error_max_ns"] for q in qs) / 1e9,
        "error_sd_s": max(q["error_sd_ns"] for q in qs) / 1e9,
        "late_over_50us": sum(sum(q["late_histogram"][6:]) for q in qs),
        "verdict_errors": sum(q["verdict_errors"] for q in qs),
    }
