# SPDX-License-Identifier: BSD-3-Clause
"""The numbers Mpptest prints (mpptest.c RunTest and OutputTestList): of
the accepted tests of a size (loops longer than 100 ticks of MPI_Wtick),
rank 0's loop time per call, and the minimum of those. The ping-pong's
time is half of it (one way) and its rate 2 x size / the minimum (bytes a
second, mpptest's bandwidth); the collectives' time is the minimum
itself."""

from __future__ import annotations

import numpy as np

from mpiscope.methods.derivation import Derivation, Step, common_start, median, us
from mpiscope.methods.stored import REJECTED, MethodSeries

PINGPONG_RATE = "mpptest's rate is 2 x size / its round trip: a ping-pong, not a window of messages"


def derive(s: MethodSeries) -> Derivation | None:
    g = s.grid()
    if g.start.size == 0:
        return None
    accepted = ~np.any(g.flags & REJECTED, axis=0)
    per_call = (g.durations / g.calls)[:, accepted]
    rank0 = per_call[g.row(0)]
    n = int(accepted.sum())
    if s.bench in ("pingpong", "bw"):
        low = float(rank0.min())
        printed = {"time (us)": us(low / 2), "rate (B/s)": 2 * s.size / low}
        if s.bench == "pingpong":
            return Derivation(
                s, "s", low / 2, printed, n, [Step("statistic", "minimum over the tests → median", median(rank0) / 2)]
            )
        return Derivation(
            s,
            "B/s",
            2 * s.size / low,
            printed,
            n,
            [Step("statistic", "minimum over the tests → median", 2 * s.size / median(rank0))],
            PINGPONG_RATE,
        )
    low = float(rank0.min())
    steps = [
        Step("statistic", "minimum over the tests → median", median(rank0)),
        Step("ranks", "rank 0's loop → the slowest rank's", median(per_call.max(axis=0))),
        Step(
            "overlap",
            "each rank timed from its own start → from the last rank's start",
            median(common_start(g, g.calls[0])[accepted]),
        ),
    ]
    return Derivation(s, "s", low, {"time (us)": us(low)}, n, steps)
