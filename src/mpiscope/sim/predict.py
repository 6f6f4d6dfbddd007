# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope sim predict`: our algorithms of one collective simulated at any
scale, ranked by the median of their replicates, and the sizes where the
best one changes (the simulated counterpart of `model predict`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from mpiscope.sim.costs import SimCosts
from mpiscope.sim.simulate import Extras, SimAnswer, algorithm


@dataclass
class Ranked:
    algo: str
    answer: SimAnswer


def rank(bench, algos, p, size, costs: SimCosts, extras: Extras) -> list[Ranked]:
    rows = [Ranked(a, algorithm(bench, a, p, size, costs, extras)) for a in algos]
    return sorted(rows, key=lambda r: r.answer.median)  # stable: ties keep registry order


def _best(bench, algos, p, size, costs, extras) -> str:
    return rank(bench, algos, p, size, costs, extras)[0].algo


def crossovers(
    bench, algos, p, costs: SimCosts, extras: Extras, lo=1, hi=1 << 30, per_doubling=2, steps=6
) -> list[tuple[int, str, str]]:
    """[(size, best below, best from it)]: the best algorithm on a geometric
    grid, each change located by `steps` bisections (on a log scale)."""
    lo = max(1, lo)
    n = int(per_doubling * math.log2(hi / lo))
    grid = sorted({lo, hi} | {int(round(lo * 2 ** (i / per_doubling))) for i in range(n + 1)})
    out = []
    prev, prev_best = grid[0], _best(bench, algos, p, grid[0], costs, extras)
    for s in grid[1:]:
        b = _best(bench, algos, p, s, costs, extras)
        if b != prev_best:
            a, z = prev, s
            for _ in range(steps):
                if z - a <= 1:
                    break
                mid = int(round(math.sqrt(a * z)))
                mid = min(max(mid, a + 1), z - 1)
                if _best(bench, algos, p, mid, costs, extras) == prev_best:
                    a = mid
                else:
                    z = mid
            out.append((z, prev_best, _best(bench, algos, p, z, costs, extras)))
        prev, prev_best = s, b
    return out
