# SPDX-License-Identifier: BSD-3-Clause
"""Compare two algorithms with the launch as the unit: a fresh launch moves
every time it measures by a common factor, so testing pooled samples as
independent (compare.py) would take a launch's shift for a difference. Each
launch gives the log of its median; the launch variance, pooled from both
groups but never below the cell's typical one, gives a Student t interval of
the ratio and p. A verdict needs p < alpha, the whole interval outside
1 ± noise, and every launch of the winner beating every launch of the other.
Method: docs/explanation/statistics.md, "With the launch as the unit"."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from mpiscope.stats.compare import FASTER, INSUFFICIENT, SAME, SLOWER
from mpiscope.stats.estimate import Estimate

CI_METHOD = "t interval over launches (the pair's launch variance, at least the cell's typical)"


@dataclass(frozen=True)
class LaunchVerdict:
    ratio: Estimate  # B / A of the launches' typical medians
    p_value: float
    verdict: str  # B against A: faster / slower / same / insufficient
    n_a: int  # launches
    n_b: int
    df: int
    every_launch: bool  # the verdict's direction holds for every pair of launches


def _median(v) -> float:
    """np.median of a launch's samples, to the bit, without its per-call
    overhead (a tune takes thousands of them, each of a few dozen values)."""
    s = np.sort(np.asarray(v, dtype=np.float64))
    h = len(s) // 2
    return float(s[h]) if len(s) % 2 else float((s[h - 1] + s[h]) / 2)


def log_medians(launches) -> np.ndarray:
    """One number per launch: the log of its median (launches with no
    positive median left out)."""
    meds = [_median(v) for v in launches if len(v)]
    return np.log([m for m in meds if m > 0])


def _distributions():
    """SciPy's chi-squared and Student's t, imported where a verdict is made:
    SciPy's stats take a second to import, and reading a tune needs none."""
    from scipy.stats import chi2, t

    return chi2, t


# Quantiles depend on the degrees of freedom only: a tune asks for the same few thousands of times.
@lru_cache(maxsize=None)
def _chi2_median_per_df(k: int) -> float:
    return float(_distributions()[0].median(k)) / k


@lru_cache(maxsize=None)
def _t_quantile(p: float, df: int) -> float:
    return float(_distributions()[1].ppf(p, df))


def pooled_variance(groups) -> tuple[float, int]:
    """(sigma_L², df) over groups of per-launch log medians: the within-group
    variance of the one-way model, pooled (groups of one launch add nothing)."""
    ss, df = 0.0, 0
    for g in groups:
        g = np.asarray(g, dtype=np.float64)
        if len(g) >= 2:
            ss += float(np.sum((g - g.mean()) ** 2))
            df += len(g) - 1
    return (ss / df if df else math.nan), df


def typical_variance(groups) -> tuple[float, int]:
    """(the median over groups of two launches or more of their variance,
    each divided by the median of its chi-square / df so that it estimates
    sigma_L², the groups' df summed); (nan, 0) without such groups."""
    scaled, df = [], 0
    for g in groups:
        g = np.asarray(g, dtype=np.float64)
        if len(g) >= 2:
            k = len(g) - 1
            scaled.append(float(np.var(g, ddof=1)) / _chi2_median_per_df(k))
            df += k
    return (float(np.median(scaled)) if scaled else math.nan), df


def compare_launches(a, b, pool=None, noise: float = 0.02, alpha: float = 0.05, level: float = 0.95) -> LaunchVerdict:
    """B against A, each a list of per-launch sample arrays; `pool`: every
    group (list of per-launch arrays) measured at the same cell, whose
    typical launch variance is the floor of A's and B's (None: no floor)."""
    la, lb = log_medians(a), log_medians(b)
    var, df = pooled_variance([la, lb])
    if pool is not None:
        floor, floor_df = typical_variance([log_medians(g) for g in pool])
        if df >= 1 and floor > var:
            var, df = floor, floor_df
    if not len(la) or not len(lb):
        raise ValueError("both sides need a launch with a positive median")
    d = float(lb.mean() - la.mean())
    if df < 1 or len(la) < 2 or len(lb) < 2:
        nan = math.nan
        ratio = Estimate(math.exp(d), nan, level, nan, nan, CI_METHOD)
        return LaunchVerdict(ratio, nan, INSUFFICIENT, len(la), len(lb), df, False)
    se = math.sqrt(var * (1.0 / len(la) + 1.0 / len(lb)))
    q = _t_quantile(0.5 + level / 2, df)
    if se > 0:
        p = float(2 * _distributions()[1].sf(abs(d) / se, df))
    else:
        p = 0.0 if d else 1.0
    ratio = Estimate(math.exp(d), math.exp(d) * se, level, math.exp(d - q * se), math.exp(d + q * se), CI_METHOD)
    faster_all = bool(lb.max() < la.min())
    slower_all = bool(lb.min() > la.max())
    verdict = SAME
    if p < alpha and ratio.high < 1.0 - noise and faster_all:
        verdict = FASTER
    elif p < alpha and ratio.low > 1.0 + noise and slower_all:
        verdict = SLOWER
    return LaunchVerdict(ratio, p, verdict, len(la), len(lb), df, faster_all if d < 0 else slower_all)
