# SPDX-License-Identifier: BSD-3-Clause
"""Ranking the algorithms of a collective by predicted time, and the sizes
where the best one changes."""

from __future__ import annotations

import math
from dataclasses import dataclass

from mpiscope.models.costmodels import algorithms, predict_time
from mpiscope.models.costmodels.base import Costs


@dataclass(frozen=True)
class Prediction:
    name: str
    hockney: float | None  # seconds
    sender_receiver: float | None  # seconds
    hockney_formula: str
    sr_formula: str

    def key(self, by: str) -> float:
        v = self.sender_receiver if by == "sr" else self.hockney
        return math.inf if v is None else v


def predict(bench, size, p, hockney: Costs | None, sr: Costs | None, by="hockney"):
    """Every algorithm's predicted time, best first (ties in registry order)."""
    rows = []
    for a in algorithms(bench):
        rows.append(
            Prediction(
                a.name,
                predict_time(bench, a.name, size, p, hockney) if hockney else None,
                predict_time(bench, a.name, size, p, sr) if sr else None,
                a.hockney,
                a.sender_receiver,
            )
        )
    # Equal times (within TIE) keep registry order: sorted() is stable.
    return sorted(rows, key=lambda r: round(r.key(by), 15) if math.isfinite(r.key(by)) else math.inf)


TIE = 1e-9  # relative: times this close are equal (the first in registry order wins)


def best(bench, size, p, costs: Costs) -> str:
    names = [a.name for a in algorithms(bench)]
    times = [predict_time(bench, n, size, p, costs) for n in names]
    fastest = min(times)
    return next(n for n, t in zip(names, times) if t <= fastest * (1 + TIE))


@dataclass(frozen=True)
class Crossover:
    size: int  # the first size at which `to` is best
    before: str  # best just below it
    to: str


def crossovers(bench, p, costs: Costs, lo=1, hi=1 << 30, per_doubling=32) -> list[Crossover]:
    """Sizes in [lo, hi] where the best algorithm changes.

    The best algorithm is evaluated on a geometric grid (`per_doubling`
    points per factor of two); between two grid sizes with different
    winners, bisection finds the first size (in bytes) of the new winner.
    A change and its reversal both inside one grid step are not seen.
    """
    if lo < 0 or hi < lo:
        raise ValueError("need 0 <= lo <= hi")
    grid = sorted(
        {lo, hi}
        | {
            int(round(lo * 2 ** (i / per_doubling)))
            for i in range(int(per_doubling * math.log2(max(hi, 1) / max(lo, 1))) + 1)
            if lo > 0
        }
        | ({0} if lo == 0 else set())
    )
    grid = [s for s in grid if lo <= s <= hi]
    out = []
    prev_size, prev_best = grid[0], best(bench, grid[0], p, costs)
    for s in grid[1:]:
        b = best(bench, s, p, costs)
        while prev_best != b:
            # best(a) is prev_best and best(s) is not: find the first size that is not.
            a, z = prev_size, s
            while z - a > 1:
                mid = (a + z) // 2
                if best(bench, mid, p, costs) == prev_best:
                    a = mid
                else:
                    z = mid
            new = best(bench, z, p, costs)
            out.append(Crossover(z, prev_best, new))
            prev_size, prev_best = z, new
        prev_size = s
    return out
