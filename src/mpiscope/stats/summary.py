# SPDX-License-Identifier: BSD-3-Clause
"""Summary statistics of sample values. Pure functions: no I/O, no printing.

Timing distributions are skewed and heavy-tailed, so the central estimate is
the median with a distribution-free confidence interval (order statistics
and the binomial distribution) rather than a mean with a normal interval.
Percentiles with bootstrap intervals are in bootstrap.py; describe() gathers
everything about one distribution, every outlier labelled and none removed.
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

import numpy as np

from mpiscope.stats.bootstrap import percentile_estimate_sorted
from mpiscope.stats.estimate import Estimate

CI_METHOD = "binomial order statistics"


def _clean(values):
    a = np.asarray(values, dtype=np.float64).ravel()
    return a[~np.isnan(a)]


def binomial_half_cdf(q: int, n: int) -> float:
    """P(B <= q) for B ~ Binomial(n, 1/2), as the engine's stopping rule
    computes it (native/engine/stoprule.c): the terms summed from q downward until
    the rest is below double precision. Without scipy, whose import would
    cost `run` and `show` a fifth of a second."""
    if q < 0:
        return 0.0
    if q >= n:
        return 1.0
    term = math.exp(math.lgamma(n + 1.0) - math.lgamma(q + 1.0) - math.lgamma(n - q + 1.0) - n * math.log(2.0))
    total = 0.0
    for i in range(q, -1, -1):
        total += term
        if term < total * 1e-17:
            break
        term *= i / (n - i + 1)  # pmf(i - 1) from pmf(i)
    return total


@functools.lru_cache(maxsize=4096)  # a run's series share few sample counts
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
    # Largest j with P(B <= j-1) <= tail: q = j-1 is the largest q with cdf(q) <= tail,
    # found from the normal approximation and checked against the exact cdf.
    q = max(0, math.floor(n / 2 + NormalDist().inv_cdf(tail) * math.sqrt(n) / 2))
    while q < n and binomial_half_cdf(q + 1, n) <= tail:
        q += 1
    while q >= 0 and binomial_half_cdf(q, n) > tail:
        q -= 1
    j = max(q + 1, 1)
    k = n - j + 1
    # P(j <= B <= n-j); for n = 1 this is 0: one sample gives a point, no interval.
    coverage = 1.0 - 2.0 * binomial_half_cdf(j - 1, n)
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


def sorted_clean(values) -> np.ndarray:
    """The values without NaNs, sorted: what summarize_sorted takes."""
    return np.sort(_clean(values))


def summarize(values, level: float = 0.95) -> dict:
    """n, min, median, CI of the median, p90, p99, max (NaNs ignored).

    Percentiles interpolate linearly between order statistics. With no
    values every statistic is NaN and n is 0.
    """
    return summarize_sorted(sorted_clean(values), level)


def percentile_sorted(a: np.ndarray, percent: float) -> float:
    """np.percentile(a, percent) of sorted, NaN-free `a` (not empty), to the
    last bit: numpy's linear method, with no copy or partition of `a`."""
    last = len(a) - 1
    h = last * (percent / 100.0)
    # past the last value, numpy interpolates it with itself (an infinity gives NaN)
    k, after = (-1, -1) if h >= last else (math.floor(h), math.floor(h) + 1)
    t = h - k
    low, high = float(a[k]), float(a[after])
    # numpy's lerp: from the nearer end, so that t = 1 gives `high` exactly
    return high - (high - low) * (1.0 - t) if t >= 0.5 else low + (high - low) * t


def median_unsorted(a: np.ndarray) -> float:
    """np.median(a) of NaN-free `a` (not empty), to the last bit: the middle
    value, or the mean of the middle two, found by a partition; summed from
    0.0 as numpy's mean sums (a negative zero comes out positive)."""
    n = len(a)
    half = n // 2
    if n % 2:
        return 0.0 + float(np.partition(a, half)[half])
    part = np.partition(a, (half - 1, half))
    return (0.0 + float(part[half - 1]) + float(part[half])) / 2.0


def summarize_sorted(a: np.ndarray, level: float = 0.95) -> dict:
    """summarize of values already sorted and without NaNs (sorted_clean):
    order statistics are read off `a`, nothing is sorted again."""
    n = len(a)
    out = {"n": n, "ci_level": level, "ci_method": CI_METHOD}
    if n == 0:
        for key in ("min", "median", "ci_low", "ci_high", "ci_coverage", "p90", "p99", "max"):
            out[key] = math.nan
        return out
    j, k, coverage = median_ci_ranks(n, level)
    p90, p99 = percentile_sorted(a, 90.0), percentile_sorted(a, 99.0)
    half = n // 2
    # As np.median: the middle value, or the mean of the middle two.
    median = a[half] if n % 2 else (a[half - 1] + a[half]) / 2.0
    out.update(
        {
            "min": float(a[0]),
            "median": float(median),
            "ci_low": float(a[j - 1]),
            "ci_high": float(a[k - 1]),
            "ci_coverage": coverage,
            "p90": float(p90),
            "p99": float(p99),
            "max": float(a[-1]),
        }
    )
    return out


# ---------------------------------------------------------------- moments, spread, outliers


def mean_var(values) -> tuple[int, float, float]:
    """(n, mean, sample variance) by the corrected two-pass algorithm (NaNs ignored).

    The mean is refined by the mean of the residuals and the variance uses
    the residuals' sum of squares minus the squared sum of residuals over n
    (Chan, Golub & LeVeque), so values far from zero with a small spread
    (timestamps, latencies of 1e-6 s varying by 1e-9 s) lose no precision;
    numpy's sums are pairwise. The variance is NaN below two values.
    """
    a = _clean(values)
    n = len(a)
    if n == 0:
        return 0, math.nan, math.nan
    m = float(np.sum(a)) / n
    r = a - m
    rsum = float(np.sum(r))
    m += rsum / n
    if n < 2:
        return n, m, math.nan
    ss = float(np.sum(r * r)) - rsum * rsum / n
    return n, m, max(ss, 0.0) / (n - 1)


def mean_estimate(values, level: float = 0.95):
    """The mean with Student's t interval (NaNs ignored).

    One value gives the value with NaN standard error and interval; a
    constant sample gives zero width.
    """
    if not 0.0 < level < 1.0:
        raise ValueError("level must be between 0 and 1")
    n, m, var = mean_var(values)
    method = "t-interval"
    if n < 2:
        return Estimate(m, math.nan, level, math.nan, math.nan, method)
    from scipy.special import stdtrit  # here: its import costs every `run` a fifth of a second

    se = math.sqrt(var / n)
    half = float(stdtrit(n - 1, 0.5 + level / 2.0)) * se
    return Estimate(m, se, level, m - half, m + half, method)


def mad(values, scale: float = 1.0) -> float:
    """Median absolute deviation from the median, times `scale` (NaNs ignored).

    scale = 1 gives the raw MAD; NORMAL_MAD_SCALE makes it estimate the
    standard deviation of normal data.
    """
    a = _clean(values)
    if len(a) == 0:
        return math.nan
    return float(scale * np.median(np.abs(a - np.median(a))))


NORMAL_MAD_SCALE = 1.482602218505602  # 1 / Phi^-1(3/4)

TUKEY_INNER = 1.5
TUKEY_OUTER = 3.0
LABEL_NONE, LABEL_OUTLIER, LABEL_FAR = "", "outlier", "far"


def _tukey_fences_sorted(a) -> dict:
    if len(a) == 0:
        q1 = q3 = math.nan
    else:
        q1, q3 = (float(x) for x in np.percentile(a, [25.0, 75.0]))
    iqr = q3 - q1
    return {
        "q1": q1,
        "q3": q3,
        "iqr": iqr,
        "low_outlier": q1 - TUKEY_INNER * iqr,
        "high_outlier": q3 + TUKEY_INNER * iqr,
        "low_far": q1 - TUKEY_OUTER * iqr,
        "high_far": q3 + TUKEY_OUTER * iqr,
    }


def tukey_fences(values) -> dict:
    """Quartiles (linear interpolation, as np.percentile), IQR and Tukey's
    fences: outliers lie outside [Q1 - 1.5 IQR, Q3 + 1.5 IQR], far outliers
    outside [Q1 - 3 IQR, Q3 + 3 IQR] (NaNs ignored)."""
    return _tukey_fences_sorted(np.sort(_clean(values)))


def tukey_labels(values, fences: dict | None = None) -> np.ndarray:
    """One label per value, in input order: "" inside the inner fences,
    "outlier" beyond them, "far" beyond the outer fences. A value on a fence
    is inside. NaN values get "". Nothing is removed."""
    a = np.asarray(values, dtype=np.float64).ravel()
    if fences is None:
        fences = tukey_fences(a)
    labels = np.full(len(a), LABEL_NONE, dtype="<U7")
    with np.errstate(invalid="ignore"):
        labels[(a < fences["low_outlier"]) | (a > fences["high_outlier"])] = LABEL_OUTLIER
        labels[(a < fences["low_far"]) | (a > fences["high_far"])] = LABEL_FAR
    return labels


def describe(values, seed: int = 1, level: float = 0.95, n_boot: int = 2000) -> dict:
    """Everything mpiscope says about one distribution (NaNs ignored).

    Keys: n, min, max (floats); median, p90, p99 (Estimates, percentile
    bootstrap with `seed`, see bootstrap.py); mean (Estimate, t interval);
    sd (sample standard deviation); mad (raw) and mad_sd (MAD scaled to
    estimate a normal sd); tukey (quartiles, IQR, fences, counts of
    "outlier" and "far" values); labels (Tukey label of every input value,
    input order, NaN inputs labelled ""); seed, level, n_boot.
    """
    raw = np.asarray(values, dtype=np.float64).ravel()
    a = np.sort(raw[~np.isnan(raw)])
    n = len(a)
    _, _, var = mean_var(a)
    fences = _tukey_fences_sorted(a)
    labels = tukey_labels(raw, fences)
    fences["n_outlier"] = int(np.count_nonzero(labels == LABEL_OUTLIER))
    fences["n_far"] = int(np.count_nonzero(labels == LABEL_FAR))
    med = percentile_estimate_sorted(a, 50.0, level, seed, n_boot)
    raw_mad = float(np.median(np.abs(a - med.point))) if n else math.nan
    return {
        "n": n,
        "min": float(a[0]) if n else math.nan,
        "median": med,
        "mean": mean_estimate(a, level),
        "p90": percentile_estimate_sorted(a, 90.0, level, seed, n_boot),
        "p99": percentile_estimate_sorted(a, 99.0, level, seed, n_boot),
        "max": float(a[-1]) if n else math.nan,
        "sd": math.sqrt(var) if not math.isnan(var) else math.nan,
        "mad": raw_mad,
        "mad_sd": raw_mad * NORMAL_MAD_SCALE,
        "tukey": fences,
        "labels": labels,
        "seed": seed,
        "level": level,
        "n_boot": n_boot,
    }
