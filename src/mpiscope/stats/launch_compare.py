# SPDX-License-Identifier: BSD-3-Clause
"""Compare two algorithms with the launch as the unit.

A fresh launch moves every time it measures by a common factor (placement,
buffers, the network's state): launch to launch ±25% on an emulated
cluster, while inside one launch the median is known to ±1%. Pooling the
samples of several launches and testing them as independent (compare.py)
then mistakes a launch's shift for a difference of the algorithms: the
more samples per launch, the surer the false verdict.

Here each launch gives one number, the log of its median, and the model is
the one-way random-effects model on them,

    log median(A, launch k) = mu_A + b_k,   b_k ~ N(0, sigma_L²),

whose sigma_L² (launch effect plus the launch median's own sampling noise)
is estimated from A's and B's launches (pooled, df = n_A + n_B − 2), but
never below the cell's typical launch variance: the median of the
variances of every group measured at the same cell (all algorithms of a
collective at one size), each scaled by its chi-square median, so that two
groups whose few launches happen to agree do not look surer than the
machine is, while an algorithm whose launches scatter wildly (on an
emulated Fast Ethernet cluster one launch of an 8-byte bcast can take 15
times as long as another) does not blur every other comparison at the
cell. The difference mu_B − mu_A gets a Student t interval and test with the df of
the variance used: the ratio of B's to A's typical launch median with its
CI, and p. A verdict "faster" (or "slower") needs:

- p < alpha and the whole CI of the ratio outside [1 − noise, 1 + noise],
- and every launch of B faster (slower) than every launch of A: the
  winner wins across launches, not on average only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.stats import chi2, t as student_t

from mpiscope.stats.compare import FASTER, INSUFFICIENT, SAME, SLOWER
from mpiscope.stats.estimate import Estimate

CI_METHOD = "t interval over launches (the pair's launch variance, at least the cell's typical)"


@dataclass(frozen=True)
class LaunchVerdict:
    ratio: Estimate     # B / A of the launches' typical medians
    p_value: float
    verdict: str        # B against A: faster / slower / same / insufficient
    n_a: int            # launches
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


# Quantiles depend on the degrees of freedom only: a tune asks for the same few thousands of times.
@lru_cache(maxsize=None)
def _chi2_median_per_df(k: int) -> float:
    return float(chi2.median(k)) / k


@lru_cache(maxsize=None)
def _t_quantile(p: float, df: int) -> float:
    return float(student_t.ppf(p, df))


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


def compare_launches(a, b, pool=None, noise: float = 0.02, alpha: float = 0.05,
                     level: float = 0.95) -> LaunchVerdict:
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
        p = float(2 * student_t.sf(abs(d) / se, df))
    else:
        p = 0.0 if d else 1.0
    ratio = Estimate(math.exp(d), math.exp(d) * se, level, math.exp(d - q * se),
                     math.exp(d + q * se), CI_METHOD)
    faster_all = bool(lb.max() < la.min())
    slower_all = bool(lb.min() > la.max())
    verdict = SAME
    if p < alpha and ratio.high < 1.0 - noise and faster_all:
        verdict = FASTER
    elif p < alpha and ratio.low > 1.0 + noise and slower_all:
        verdict = SLOWER
    return LaunchVerdict(ratio, p, verdict, len(la), len(lb), df,
                         faster_all if d < 0 else slower_all)
