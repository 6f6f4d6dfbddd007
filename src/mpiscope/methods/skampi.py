# SPDX-License-Identifier: BSD-3-Clause
"""The numbers SKaMPI 5 prints (src/measurement.c, extract_final_results):
of the valid repetitions (none of whose ranks started late for its time
slot or took longer than the slot; the first, calibrating batch never
counts), each repetition's slowest rank; sorted, the lowest and highest
quarter (n/4 each, rounded down) dropped; the mean of the rest, its
standard error, and each rank's mean over the same repetitions. The
ping-pong's number is a whole round trip (the larger of the two ranks'
times), not half of it."""

from __future__ import annotations

import numpy as np

from mpiscope.methods.derivation import Derivation, Step, median, us
from mpiscope.methods.stored import LATE, TOO_LONG, MethodSeries


def trimmed(slowest: np.ndarray) -> np.ndarray:
    """Indices of the repetitions SKaMPI averages: sorted by time, without
    the lowest and highest n/4."""
    n = len(slowest)
    order = np.argsort(slowest, kind="stable")
    return order[n // 4 : n - n // 4]


def std_error(values: np.ndarray) -> float:
    """SKaMPI's standard error of a mean: sqrt(|Σv² − (Σv)²/k| / (k (k − 1)))."""
    k = len(values)
    if k < 2:
        return float("nan")
    total = values.sum()
    return float(np.sqrt(abs((values * values).sum() - total * total / k) / (k * (k - 1))))


def derive(s: MethodSeries) -> Derivation | None:
    g = s.grid()
    if g.start.size == 0:
        return None
    valid = ~np.any(g.flags & (LATE | TOO_LONG), axis=0)
    d = g.durations[:, valid]
    slowest = d.max(axis=0)
    mid = trimmed(slowest)
    value = float(slowest[mid].mean())
    printed = {
        "count": int(valid.sum()),
        "result (us)": round(us(value), 1),
        "std_error (us)": round(us(std_error(slowest[mid])), 1),
        "per rank (us)": [round(us(x), 1) for x in d[:, mid].mean(axis=1)],
    }
    if s.bench == "pingpong":
        steps = [
            Step("definition", "a round trip → half of it", value / 2),
            Step("statistic", "mean of the middle half → median", median(slowest) / 2),
            Step("ranks", "the larger of the two ranks' times → rank 0's", median(d[g.row(0)]) / 2),
        ]
        return Derivation(s, "s", value, printed, int(valid.sum()), steps)
    steps = [Step("statistic", "mean of the middle half → median", median(slowest))]
    return Derivation(s, "s", value, printed, int(valid.sum()), steps)
