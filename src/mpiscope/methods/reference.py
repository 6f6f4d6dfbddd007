# SPDX-License-Identifier: BSD-3-Clause
"""The reference series (native/engine/methods/reference.c): mpiscope's own
operations timed per call, each differing from `ref_barrier` (a barrier
before every call) in one respect. Every call is read as mpiscope reads its
own: a round trip halved, a window of messages as its time, a collective as
its slowest rank from the last rank's start."""

from __future__ import annotations

import numpy as np

from mpiscope.methods.derivation import common_start
from mpiscope.methods.stored import WINDOW, MethodSeries

BARRIER, B2B, ROTATE, CYCLE = "ref_barrier", "ref_b2b", "ref_rotate", "ref_cycle"


def call_times(s: MethodSeries) -> np.ndarray:
    """Every measured call's time (seconds): half the round trip, the
    window's time, or the collective's."""
    g = s.grid()
    if g.start.size == 0:
        return np.array([])
    if s.bench in ("pingpong", "bw"):
        d = g.durations[g.row(0)]
        return d / 2 if s.bench == "pingpong" else d
    return common_start(g)


def in_unit(bench: str, size: int):
    """From a call time to the number's unit: a window's time to bytes a second."""
    if bench == "bw":
        return lambda t: size * WINDOW / t
    return lambda t: t
