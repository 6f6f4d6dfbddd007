"""Bootstrap replicates of a sample median, drawn without resampling the data.

A bootstrap resample draws n values with replacement from the n sorted
values x_(1) <= ... <= x_(n). Its m-th smallest value is x_(j) or smaller
exactly when at least m of the n draws fall on x_(1..j), and the number of
such draws is Binomial(n, j/n). So the index J of the resample's m-th
order statistic has the distribution

    P(J <= j) = P(Binomial(n, j/n) >= m),

and J can be drawn by inverting this distribution function: O(n) once per
sample plus O(log n) per replicate, however many samples a series holds
(runs keep up to 100000 repetitions per size, too many to resample a
thousand times over dozens of sizes).

For odd n the resample median is the ((n+1)/2)-th order statistic and the
draw is exact. For even n it is the mean of the (n/2)-th and (n/2+1)-th,
whose joint distribution this does not model: both are drawn from the same
uniform (comonotone), which gives each its exact marginal and differs from
the true resample median by less than one spacing between neighbouring
order statistics.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import binom


def _order_stat_cdf(n: int, m: int) -> np.ndarray:
    """P(J <= j) for j = 1..n: J indexes the m-th smallest value of a resample.

    Binomial(n, j/n) has a standard deviation of at most √n / 2, so outside
    m ± 5√n the probability is 0 or 1 to well below 1e-20: only that window
    is evaluated (large samples would otherwise cost n evaluations each).
    """
    half = int(math.ceil(5.0 * math.sqrt(n))) + 2
    lo, hi = max(1, m - half), min(n, m + half)
    cdf = np.zeros(n)
    cdf[hi:] = 1.0                       # j > hi
    j = np.arange(lo, hi + 1)
    cdf[lo - 1:hi] = binom.sf(m - 1, n, j / n)
    cdf[-1] = 1.0
    return np.maximum.accumulate(cdf)    # monotone despite rounding


def _draw(sorted_values, cdf, u):
    idx = np.searchsorted(cdf, u, side="left")
    return sorted_values[np.minimum(idx, len(sorted_values) - 1)]


def bootstrap_medians(values, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """`n_boot` bootstrap replicates of the median of `values` (NaNs ignored).

    Consumes exactly `n_boot` uniforms from `rng`, whatever the sample size,
    so the stream stays aligned across series. No values: all NaN.
    """
    a = np.asarray(values, dtype=np.float64).ravel()
    a = np.sort(a[~np.isnan(a)])
    u = rng.random(n_boot)
    n = len(a)
    if n == 0:
        return np.full(n_boot, np.nan)
    if n == 1:
        return np.full(n_boot, a[0])
    if n % 2:
        return _draw(a, _order_stat_cdf(n, (n + 1) // 2), u)
    low = _draw(a, _order_stat_cdf(n, n // 2), u)
    high = _draw(a, _order_stat_cdf(n, n // 2 + 1), u)
    return 0.5 * (low + high)


def percentile_interval(replicates, level: float) -> tuple[float, float]:
    """Percentile bootstrap interval; infinite replicates are allowed (no
    interpolation across them), NaN replicates are ignored."""
    r = np.asarray(replicates, dtype=np.float64)
    r = r[~np.isnan(r)]
    if len(r) == 0:
        return (float("nan"), float("nan"))
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(r, [tail, 1.0 - tail], method="inverted_cdf")
    return (float(lo), float(hi))


def replicate_stderr(replicates) -> float:
    """Standard deviation of the finite replicates; NaN when any is infinite
    or fewer than two are finite."""
    r = np.asarray(replicates, dtype=np.float64)
    r = r[~np.isnan(r)]
    if len(r) < 2 or not np.all(np.isfinite(r)):
        return float("nan")
    return float(np.std(r, ddof=1))
