# SPDX-License-Identifier: BSD-3-Clause
"""The numbers MPIBench prints, as Hamid (2008) describes them (its source
is not published): every repetition of every rank on the global clock;
for a collective, each repetition's slowest rank (its time from its own
start after the barrier), averaged over the repetitions; for
point-to-point, every message's time (its receiver's end minus its
sender's start), all pairs at once, averaged. The summary also gives the
minimum."""

from __future__ import annotations

import numpy as np

from mpiscope.methods.derivation import Derivation, Step, common_start, median, us
from mpiscope.methods.stored import MethodSeries


def one_way_times(g) -> tuple[np.ndarray, np.ndarray]:
    """(every message's time, those of rank 0's pair): rank p (first half)
    sends to p + n/2, which answers; receiver's end minus sender's start."""
    half = len(g.ranks) // 2
    first, second = np.arange(half), np.arange(half) + half
    there = g.end[second] - g.start[first]
    back = g.end[first] - g.start[second]
    return np.concatenate([there.ravel(), back.ravel()]), np.concatenate([there[0], back[0]])


def derive(s: MethodSeries) -> Derivation | None:
    g = s.grid()
    if g.start.size == 0:
        return None
    if s.bench == "pingpong":
        times, pair0 = one_way_times(g)
        value = float(times.mean())
        printed = {"average (us)": us(value), "minimum (us)": us(times.min()), "messages": len(times)}
        steps = [Step("statistic", "mean over the messages → median", median(times))]
        if len(g.ranks) > 2:
            steps.append(Step("ranks", "every pair at once → rank 0's pair", median(pair0)))
        return Derivation(s, "s", value, printed, g.start.shape[1], steps)
    slowest = g.durations.max(axis=0)
    value = float(slowest.mean())
    printed = {"average (us)": us(value), "minimum (us)": us(slowest.min()), "repetitions": len(slowest)}
    steps = [
        Step("statistic", "mean over the repetitions → median", median(slowest)),
        Step("barrier", "each rank timed from its own start → from the last rank's start", median(common_start(g))),
    ]
    return Derivation(s, "s", value, printed, len(slowest), steps)
