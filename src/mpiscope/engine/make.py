# SPDX-License-Identifier: BSD-3-Clause
"""Runs make on C sources into a build directory, one process at a time per
directory (two runs starting together must not link the same file at once)."""

import fcntl
import os
import subprocess
from pathlib import Path


def make(source: Path, build: Path, *args) -> subprocess.CompletedProcess:
    """`make -s -j<cpus> -C source BUILD=build *args`, holding build/.lock."""
    build.mkdir(parents=True, exist_ok=True)
    jobs = str(len(os.sched_getaffinity(0)))
    with open(build / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return subprocess.run(["make", "-s", "-j", jobs, "-C", str(source), f"BUILD={build}", *args],
                              capture_output=True, text=True)
