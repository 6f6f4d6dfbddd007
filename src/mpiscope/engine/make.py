# SPDX-License-Identifier: BSD-3-Clause
"""Runs make on C sources into a build directory, one process at a time per
directory (two runs starting together must not link the same file at once)."""

import fcntl
import os
import shutil
import subprocess
from pathlib import Path

LOCK = ".lock"


def make(source: Path, build: Path, *args) -> subprocess.CompletedProcess:
    """`make -s -j<cpus> -C source BUILD=build *args`, holding build/.lock.
    A build directory this call created is removed again when make fails
    and left nothing built in it (a compiler wrapper that cannot compile,
    say Intel MPI's under a wrong I_MPI_ROOT): no empty directory stays
    behind for each failed attempt."""
    created = not build.exists()
    build.mkdir(parents=True, exist_ok=True)
    jobs = str(len(os.sched_getaffinity(0)))
    with open(build / LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        made = subprocess.run(
            ["make", "-s", "-j", jobs, "-C", str(source), f"BUILD={build}", *args], capture_output=True, text=True
        )
        if made.returncode != 0 and created and not _built_anything(build):
            shutil.rmtree(build, ignore_errors=True)
    return made


def _built_anything(build: Path) -> bool:
    """Whether `build` holds a file other than the lock (directories aside)."""
    return any(p.name != LOCK and not p.is_dir() for p in build.rglob("*"))
