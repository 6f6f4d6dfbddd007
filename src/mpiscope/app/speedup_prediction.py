# SPDX-License-Identifier: BSD-3-Clause
"""The application's speedup predicted from its profile and a tune's verification
(pure): T / (rest + Σ t_cell / s_cell), t_cell a profile cell's time, s_cell the
verified speedup of the nearest verified size (log scale) whose rule names an
algorithm or whose default measured faster or slower; blocking cells at tuned
communicator sizes only, every other cell unchanged and listed with why. The
interval: each cell's speedup lognormal from its 95% interval, cells independent,
times the application's own launch-to-launch spread where it is known (a seeded
Monte Carlo); the conservative bounds put every cell at its interval's end."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mpiscope.common.jsonable import plain
from mpiscope.mpilibs.algorithm_catalog import DEFAULT
from mpiscope.tune.weights import nearest

LEVEL = 0.95
Z = 1.959963984540054  # the normal quantile of (1 + LEVEL) / 2
METHOD = (
    "95% interval: seeded Monte Carlo, each verified cell's speedup lognormal with the 95% "
    "interval of its verification, cells independent, times a lognormal of the application's "
    "launch-to-launch spread (launch_spread_sd); bounds: every cell at its interval's end, "
    "widened by the same spread"
)


def spread_sd(low: float | None, high: float | None) -> float:
    """The log-scale standard deviation that a measured speedup's 95%
    interval (low, high) gives: what the application's launch-to-launch
    spread alone makes a measured speedup vary by."""
    if not low or not high or low <= 0 or high < low or not math.isfinite(high / low):
        return 0.0
    return math.log(high / low) / (2 * Z)


@dataclass(frozen=True)
class CellPrediction:
    collective: str
    comm_size: int
    lo: int
    hi: int
    blocking: bool
    calls: int
    time_s: float  # Σ over ranks
    share: float  # of the application's time
    tuned_size: int | None  # the verified size the bin goes to (None: unchanged)
    rule: str | None  # the rule's algorithm at that cell
    speedup: float
    low: float
    high: float
    status: str  # "verified" or "unchanged: why"
    saved_s: float  # time_s − time_s / speedup

    @property
    def verified(self) -> bool:
        return self.status == "verified"


@dataclass(frozen=True)
class Prediction:
    speedup: float
    low: float
    high: float
    bound_low: float
    bound_high: float
    level: float
    app_time_s: float  # per rank
    collective_share: float  # share of the application's time in verified cells
    cells: tuple
    seed: int
    draws: int
    method: str
    launch_spread_sd: float = 0.0  # log scale; 0: the measurement's spread not known

    def to_dict(self) -> dict:
        return plain(self)


def _bin_middle(lo: int, hi: int) -> int:
    return 0 if hi <= 0 else int(round(math.sqrt(max(lo, 1) * max(hi, 1))))


def _match(cell, tune):
    """(verified cell, None) or (None, why the cell stays unchanged)."""
    if not cell.blocking:
        return None, "unchanged: nonblocking (its time is the call's start only)"
    if cell.collective not in tune.rules:
        return None, "unchanged: collective not tuned"
    if cell.comm_size not in tune.ps:
        return None, (
            f"unchanged: communicator size {cell.comm_size} not tuned"
            if cell.comm_size > 0
            else "unchanged: communicator size not kept apart by the profiler"
        )
    rows = tune.verified(cell.collective, cell.comm_size)
    if not rows:
        return None, "unchanged: no verified speedup at this communicator size"
    size = nearest([r.size for r in rows], _bin_middle(cell.lo, cell.hi))
    v = next(r for r in rows if r.size == size)
    if v.rule == DEFAULT and v.verdict not in ("tuned faster", "tuned slower"):
        return v, "unchanged: the rule keeps the library's default"
    return v, "verified"


def _cells(profile, tune, total):
    out, keys = [], []
    for c in profile.cells:
        v, status = _match(c, tune)
        s, lo, hi = 1.0, 1.0, 1.0
        if status == "verified":
            s = v.speedup
            lo, hi = (v.low, v.high) if v.low and v.high else (s, s)
        out.append(
            CellPrediction(
                c.collective,
                c.comm_size,
                c.lo,
                c.hi,
                c.blocking,
                c.calls,
                c.time_s,
                c.time_s / total,
                v.size if v else None,
                v.rule if v else None,
                s,
                lo,
                hi,
                status,
                c.time_s - c.time_s / s,
            )
        )
        keys.append((v.collective, v.p, v.size) if status == "verified" else None)
    return out, keys


def predict(
    profile, tune, *, app_time_s: float | None = None, launch_spread_sd: float = 0.0, seed: int = 1, draws: int = 4000
) -> Prediction:
    """`profile`: app/profile_cells.ProfileTimes; `tune`: app/tune_cells.TuneCells;
    `app_time_s`: the application's time per launch under the default (the
    part beyond the profile's wall time per rank is unchanged);
    `launch_spread_sd`: spread_sd() of the measured speedup, so that the
    interval is where a measurement of that many launches should fall."""
    per_rank = max(profile.wall_per_rank_s, app_time_s or 0.0)
    total = per_rank * profile.np
    cells, keys = _cells(profile, tune, total)
    ver = [(c, k) for c, k in zip(cells, keys) if k is not None]
    t_ver = sum(c.time_s for c, _ in ver)
    rest = total - t_ver

    def speedup_with(s_of):
        return total / (rest + sum(c.time_s / s_of(c, k) for c, k in ver))

    point = speedup_with(lambda c, k: c.speedup)
    widen = math.exp(Z * launch_spread_sd)
    b_low = speedup_with(lambda c, k: c.low) / widen
    b_high = speedup_with(lambda c, k: c.high) * widen
    distinct = sorted({k for _, k in ver})
    rng = np.random.default_rng(seed)
    if distinct:
        first = {k: next(c for c, kk in ver if kk == k) for k in distinct}
        mu = np.array([math.log(first[k].speedup) for k in distinct])
        sd = np.array([math.log(first[k].high / first[k].low) / (2 * Z) for k in distinct])
        s = np.exp(mu + sd * rng.standard_normal((draws, len(distinct))))
        index = {k: i for i, k in enumerate(distinct)}
        times = np.array([c.time_s for c, _ in ver])
        cols = np.array([index[k] for _, k in ver])
        sims = total / (rest + (times / s[:, cols]).sum(axis=1))
    else:
        sims = np.full(draws, point)
    if launch_spread_sd > 0:
        sims = sims * np.exp(launch_spread_sd * rng.standard_normal(draws))
    if distinct or launch_spread_sd > 0:
        low, high = (float(x) for x in np.quantile(sims, [(1 - LEVEL) / 2, (1 + LEVEL) / 2]))
    else:
        low = high = point
    return Prediction(
        point,
        low,
        high,
        b_low,
        b_high,
        LEVEL,
        per_rank,
        t_ver / total,
        tuple(cells),
        seed,
        draws,
        METHOD,
        launch_spread_sd,
    )


def agree(measured: tuple, predicted: Prediction) -> bool:
    """Whether the measured speedup's interval (low, high) and the predicted one overlap."""
    lo, hi = measured
    return lo <= predicted.high and predicted.low <= hi


@dataclass(frozen=True)
class Explanation:
    direction: str  # "measured above prediction" | "measured below prediction" | "agree"
    gap_share: float  # measured − predicted time saved, as a share of the application's time
    carrying: tuple  # ((cell, its share of the predicted gain), …), largest first
    unchanged: tuple  # the unchanged cells with the largest share of the application's time

    def to_dict(self) -> dict:
        """carrying: each cell's fields and its `share_of_gain`."""
        return plain(
            {
                "direction": self.direction,
                "gap_share": self.gap_share,
                "carrying": [{**plain(c), "share_of_gain": g} for c, g in self.carrying],
                "unchanged": list(self.unchanged),
            }
        )


def explain(measured: float, predicted: Prediction, top: int = 5) -> Explanation:
    """Where the difference between the measured speedup and the predicted
    one can lie: the verified cells that carry most of the predicted gain
    (each with its share of that gain and of the application's time), and
    the largest cells the prediction left unchanged."""
    gap = (1 - 1 / measured) - (1 - 1 / predicted.speedup)
    direction = (
        "measured above prediction"
        if measured > predicted.high
        else "measured below prediction"
        if measured < predicted.low
        else "agree"
    )
    ver = [c for c in predicted.cells if c.verified]
    saved = sum(c.saved_s for c in ver)
    carrying = sorted(ver, key=lambda c: -abs(c.saved_s))[:top]
    unchanged = sorted((c for c in predicted.cells if not c.verified), key=lambda c: -c.time_s)[:top]
    return Explanation(
        direction, gap, tuple((c, c.saved_s / saved if saved else 0.0) for c in carrying), tuple(unchanged)
    )
