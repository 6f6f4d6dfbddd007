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
is pooled over every group measured at the same cell (all algorithms of a
collective at one size: the launch effect is the machine's, not the
algorithm's), df = Σ (launches − 1). The difference mu_B − mu_A gets a
Student t interval and test with those df: the ratio of B's to A's typical
launch median with its CI, and p. A verdict "faster" (or "slower") needs:

- p < alpha and the whole CI of the ratio outside [1 − noise, 1 + noise],
- and every launch of B faster (slower) than every launch of A: the
  winner wins across launches, not on average only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t

from mpiscope.stats.compare import FASTER, INSUFFICIENT, SAME, SLOWER
from mpiscope.stats.estimate import Estimate

CI_METHOD = "t interval over launches (launch variance pooled over the cell's groups)"


@dataclass(frozen=True)
class LaunchVerdict:
    ratio: Estimate     # B / A of the launches' typical medians
    p_value: float
    verdict: str        # B against A: faster / slower / same / insufficient
    n_a: int            # launches
    n_b: int
    df: int
    every_launch: bool  # the verdict's direction holds for every pair of launches


def log_medians(launches) -> np.ndarray:
    """One number per launch: the log of its median (launches with no
    positive median left out)."""
    meds = [float(np.median(v)) for v in launches if len(v)]
    return np.log([m for m in meds if m > 0])


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


def compare_launches(a, b, pool=None, noise: float = 0.02, alpha: float = 0.05,
                     level: float = 0.95) -> LaunchVerdict:
    """B against A, each a list of per-launch sample arrays; `pool`: the
    groups (lists of per-launch arrays) measured at the same cell whose
    launch variance is pooled, A and B among them (None: A and B alone)."""
    la, lb = log_medians(a), log_medians(b)
    var, df = pooled_variance([log_medians(g) for g in pool] if pool is not None else [la, lb])
    if not len(la) or not len(lb):
        raise ValueError("both sides need a launch with a positive median")
    d = float(lb.mean() - la.mean())
    if df < 1 or len(la) < 2 or len(lb) < 2:
        nan = math.nan
        ratio = Estimate(math.exp(d), nan, level, nan, nan, CI_METHOD)
        return LaunchVerdict(ratio, nan, INSUFFICIENT, len(la), len(lb), df, False)
    se = math.sqrt(var * (1.0 / len(la) + 1.0 / len(lb)))
    q = float(student_t.ppf(0.5 + level / 2, df))
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
