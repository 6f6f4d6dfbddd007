# SPDX-License-Identifier: BSD-3-Clause
"""Change points of a series of run medians, each with its interval.

Candidates come from PELT (Killick et al. 2012) with the L2 cost, as ruptures
implements it (KernelCPD, linear kernel; Truong, Oudre and Vayatis 2020), on the
log of the medians scaled by the run-to-run noise. A candidate stays only when
its step, after / before − 1 from the bounds of the two segments' levels, lies
wholly beyond the threshold, as `compare` asks of two runs. A level is the median
of its runs' medians, its interval at least that median's 95% CI and a typical
run's half-width over √n (level()). Failing candidates are removed one at a time,
the one whose removal adds least to PELT's cost first, until every one left passes."""

from __future__ import annotations

import functools
import math
import os
from dataclasses import dataclass

import numpy as np

from mpiscope.stats.summary import median_ci_ranks

SLOWER, FASTER = "slower", "faster"
MIN_SEGMENT = 2  # runs on each side of a change point: one odd night is not a change


@dataclass(frozen=True)
class Level:
    """A segment of runs: the median of their medians and its interval."""

    median: float
    low: float
    high: float
    runs: int

    def to_dict(self) -> dict:
        return {"median": self.median, "ci_low": self.low, "ci_high": self.high, "runs": self.runs}


@dataclass(frozen=True)
class Step:
    """From one level to the next: after / before − 1 with its interval."""

    before: Level
    after: Level
    step: float
    low: float
    high: float
    direction: str  # slower or faster (times that grow, bandwidths that shrink: slower)

    def beyond(self, threshold) -> bool:
        """The whole interval of the step beyond ±threshold."""
        return self.low > threshold or self.high < -threshold

    def to_dict(self) -> dict:
        return {
            "step": self.step,
            "step_low": self.low,
            "step_high": self.high,
            "direction": self.direction,
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
        }


def level(medians, lows, highs) -> Level:
    """The level of a segment: the median of its runs' medians, with the wider
    of two intervals on each side: the 95% interval of that median from the
    runs' medians (order statistics: the spread between runs), and what the
    runs' own intervals say of it: a typical run's half-width (the median of
    the runs' relative half-widths) divided by √n, as the error of a mean of
    n independent runs shrinks, times √(π/2) from three runs on, as much
    wider as a median of many is than their mean. One run: its own interval;
    n ≤ 5 runs: their spread from lowest to highest bounds it too, so one odd
    run in a short segment widens its level instead of moving it."""
    m = np.sort(np.asarray(medians, dtype=np.float64))
    n = len(m)
    j, k, _ = median_ci_ranks(n)
    center = float(np.median(m))
    if n == 1:
        return Level(center, float(lows[0]), float(highs[0]), 1)
    shrink = (1.0 if n <= 2 else math.sqrt(math.pi / 2)) / math.sqrt(n)
    below, above = _typical(medians, lows, highs)
    return Level(
        center,
        min(float(m[j - 1]), center * math.exp(-below * shrink)),
        max(float(m[k - 1]), center * math.exp(above * shrink)),
        n,
    )


def _typical(medians, lows, highs) -> tuple[float, float]:
    """The median log half-width of the runs' own intervals below and above
    their medians; infinite when a bound is not positive (no interval)."""
    m, lo, hi = (np.asarray(x, dtype=np.float64) for x in (medians, lows, highs))
    with np.errstate(divide="ignore", invalid="ignore"):
        below = np.where((lo > 0) & (m > 0), np.log(m / lo), np.inf)
        above = np.where((hi > 0) & (m > 0), np.log(hi / m), np.inf)
    return float(np.median(below)), float(np.median(above))


def step(before: Level, after: Level, unit="s") -> Step:
    """after / before − 1, with an interval from the two levels' intervals
    combined as independent errors are: in quadrature, on the logarithms
    (the interval of a difference; adding the half-widths would be the test
    of two intervals' overlap, which rejects far less often than its level
    says: Schenker and Gentleman 2001)."""
    ratio = after.median / before.median - 1.0
    low = (ratio + 1.0) * math.exp(-_spread(_over(after.median, after.low), _over(before.high, before.median))) - 1.0
    high = (ratio + 1.0) * math.exp(_spread(_over(after.high, after.median), _over(before.median, before.low))) - 1.0
    grew = ratio > 0
    slower = grew if unit == "s" else not grew
    return Step(before, after, ratio, low, high, SLOWER if slower else FASTER)


def _over(a, b) -> float:
    return a / b if b > 0 else math.inf


def _spread(a, b) -> float:
    """The log half-width of a ratio from the half-widths a and b (as ratios ≥ 1)
    of its two terms; infinite when a bound is not positive."""
    if not (a > 0 and b > 0 and math.isfinite(a) and math.isfinite(b)):
        return math.inf
    return math.hypot(math.log(a), math.log(b))


def _signal(medians):
    """The logarithm of the medians, centred and scaled by the run-to-run
    noise (robust to the steps themselves: each adds one large difference)."""
    logs = np.log(np.asarray(medians, dtype=np.float64))
    diffs = np.diff(logs)
    sigma = 1.4826 * float(np.median(np.abs(diffs - np.median(diffs)))) / math.sqrt(2.0)
    scale = sigma if sigma > 0 else max(float(np.std(logs)), 1e-12)
    return ((logs - np.median(logs)) / scale).reshape(-1, 1)


def penalty(n) -> float:
    return 2.0 * math.log(n)


def _candidates(medians) -> list[int]:
    """PELT's change points: indexes of the first run after each."""
    n = len(medians)
    if n < 2 * MIN_SEGMENT:
        return []
    # KernelCPD's PELT with the linear kernel is PELT with the L2 cost, in ruptures' C code;
    # its path holds, at each end of a segment, the end of the segment before.
    path = _pelt_l2()(np.ascontiguousarray(_signal(medians), dtype=np.double), penalty(n), MIN_SEGMENT)
    cuts, end = [], n
    while end > 0:
        end = int(path[end])
        cuts.append(end)
    return sorted(c for c in cuts if c > 0)


@functools.cache
def _pelt_l2():
    """ruptures' ekcpd_pelt_L2 (what KernelCPD(kernel="linear").predict(pen=...)
    calls), loaded from its extension module alone: importing the ruptures
    package imports scipy.stats and scipy.spatial for its other cost
    functions, which takes longer than all of `history`'s work on 10,000 runs."""
    import importlib.machinery
    import importlib.util

    name = "ruptures.detection._detection.ekcpd"
    try:
        where = os.path.join(os.path.dirname(importlib.util.find_spec("ruptures").origin), "detection", "_detection")
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            if os.path.exists(os.path.join(where, "ekcpd" + suffix)):
                spec = importlib.util.spec_from_file_location(name, os.path.join(where, "ekcpd" + suffix))
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                return module.ekcpd_pelt_L2
    except (ImportError, AttributeError, OSError, TypeError):
        pass
    from ruptures.detection._detection.ekcpd import ekcpd_pelt_L2  # another layout: the package

    return ekcpd_pelt_L2


def change_points(medians, lows, highs, unit="s", threshold=0.02) -> list[tuple[int, Step]]:
    """[(index of the first run after, Step)] of every change point that is
    significant and beyond `threshold`, oldest first."""
    m, lo, hi = (np.asarray(x, dtype=np.float64) for x in (medians, lows, highs))
    cuts = _candidates(m)
    if cuts:
        x = _signal(m)[:, 0]
        sums, squares = np.concatenate(([0.0], np.cumsum(x))), np.concatenate(([0.0], np.cumsum(x * x)))
    while cuts:
        steps = _steps(m, lo, hi, cuts, unit)
        failing = [i for i, s in enumerate(steps) if not s.beyond(threshold)]
        if not failing:
            return list(zip(cuts, steps))
        # Of those that fail, remove the one that explains least: whose removal adds least
        # to the L2 cost PELT minimised (backward elimination), so a failing step that is
        # real keeps its place while the odd nights around it are merged away.
        bounds = [0, *cuts, len(m)]
        del cuts[
            min(
                failing,
                key=lambda i: (
                    _l2(sums, squares, bounds[i], bounds[i + 2])
                    - _l2(sums, squares, bounds[i], bounds[i + 1])
                    - _l2(sums, squares, bounds[i + 1], bounds[i + 2])
                ),
            )
        ]
    return []


def _steps(m, lo, hi, cuts, unit) -> list[Step]:
    bounds = [0, *cuts, len(m)]
    levels = [level(m[a:b], lo[a:b], hi[a:b]) for a, b in zip(bounds, bounds[1:])]
    return [step(a, b, unit) for a, b in zip(levels, levels[1:])]


def _l2(sums, squares, a, b) -> float:
    """The L2 cost of the segment [a, b) of the signal: its squared deviations from its mean."""
    return float(squares[b] - squares[a] - (sums[b] - sums[a]) ** 2 / (b - a))


def _margin(s: Step) -> float:
    """How far the step's interval is from 0 (negative: it holds 0)."""
    return max(s.low, -s.high)
