"""Summary statistics of sample values. Pure functions: no I/O, no printing.

Timing distributions are skewed and heavy-tailed, so the central estimate is
the median with a distribution-free confidence interval (order statistics
and the binomial distribution) rather than a mean with a normal interval.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import binom

CI_METHOD = "binomial order statistics"


def _clean(values):
    a = np.asarray(values, dtype=np.float64).ravel()
    return a[~np.isnan(a)]


def median_ci_ranks(n: int, level: float = 0.95):
    """1-based ranks (j, k) of the order statistics bounding the median CI,
    and the interval's exact coverage.

    The number of samples below the true median is Binomial(n, 1/2), so
    P(x_(j) <= median < x_(k)) = P(j <= B <= k-1). The interval is chosen
    symmetric, with j as large as possible while the coverage is at least
    `level`. For n too small to reach `level` (n <= 5 at 95%) the widest
    interval (min, max) is returned and the coverage says what it achieves.
    """
    if n < 1:
        raise ValueError("median_ci_ranks needs n >= 1")
    if not 0.0 < level < 1.0:
        raise ValueError("level must be between 0 and 1")
    tail = (1.0 - level) / 2.0
    # Largest j with P(B <= j-1) <= tail; ppf gives the smallest q with cdf(q) >= tail.
    q = int(binom.ppf(tail, n, 0.5))
    if binom.cdf(q, n, 0.5) > tail:
        q -= 1
    j = max(q + 1, 1)
    k = n - j + 1
    # P(j <= B <= n-j); for n = 1 this is 0: one sample gives a point, no interval.
    coverage = 1.0 - 2.0 * binom.cdf(j - 1, n, 0.5)
    return j, k, float(coverage)


def median_ci(values, level: float = 0.95) -> tuple[float, float]:
    """Distribution-free confidence interval of the median (NaNs ignored).

    Returns (nan, nan) for no values; (x, x) for one value.
    """
    a = np.sort(_clean(values))
    if len(a) == 0:
        return (math.nan, math.nan)
    j, k, _ = median_ci_ranks(len(a), level)
    return (float(a[j - 1]), float(a[k - 1]))


def summarize(values, level: float = 0.95) -> dict:
    """n, min, median, CI of the median, p90, p99, max (NaNs ignored).

    Percentiles interpolate linearly between order statistics. With no
    values every statistic is NaN and n is 0.
    """
    a = np.sort(_clean(values))
    n = len(a)
    out = {"n": n, "ci_level": level, "ci_method": CI_METHOD}
    if n == 0:
        for key in ("min", "median", "ci_low", "ci_high", "ci_coverage", "p90", "p99", "max"):
            out[key] = math.nan
        return out
    j, k, coverage = median_ci_ranks(n, level)
    p90, p99 = np.percentile(a, [90.0, 99.0])
    out.update({
        "min": float(a[0]),
        "median": float(np.median(a)),
        "ci_low": float(a[j - 1]),
        "ci_high": float(a[k - 1]),
        "ci_coverage": coverage,
        "p90": float(p90),
        "p99": float(p99),
        "max": float(a[-1]),
    })
    return out
