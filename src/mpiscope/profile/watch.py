# SPDX-License-Identifier: BSD-3-Clause
"""Waiting for a profiled launch to end, and ending it when the MPI library does
not return from MPI_Finalize.

Every rank writes its profile (rank-<r>.json) in MPI_Finalize before calling the
library's, which can then spin for ever (MPICH 4.0's ch4:ucx flushing its
endpoints inside a PMI barrier, pmodels/mpich#6596; more likely on busy CPUs,
even after native/clock/quiet_exit.c's barrier). Once every rank has written its
profile nothing of the application is left to wait for, so a launch still
running `grace_s` later is stopped: the profile is whole, and the run says what
happened."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from mpiscope.measure.launch import FINALIZE_GRACE_S  # the engine's launches wait as long
from mpiscope.common.inputs import InputError, read_json


def ranks_done(raw_dir: Path) -> bool:
    """Every rank of the job has written its profile."""
    written = list(raw_dir.glob("rank-*.json"))
    if not written:
        return False
    try:
        world = read_json(written[0])["world_size"]
    except (InputError, KeyError, TypeError):
        return False
    return len(written) >= world


def wait(
    proc: subprocess.Popen, raw_dir: Path, grace_s: float = FINALIZE_GRACE_S, poll_s: float = 1.0
) -> tuple[int, bool]:
    """(exit code, whether the launch was stopped after every rank had
    written its profile)."""
    done_at = None
    while True:
        try:
            return proc.wait(timeout=poll_s), False
        except subprocess.TimeoutExpired:
            pass
        if done_at is None and ranks_done(raw_dir):
            done_at = time.monotonic()
        if done_at is not None and time.monotonic() - done_at >= grace_s:
            return _stop(proc), True


def _stop(proc: subprocess.Popen) -> int:
    """SIGTERM to the launcher (Hydra and mpirun then end their ranks, on
    other hosts too), SIGKILL if that is not enough."""
    proc.terminate()
    try:
        return proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()
