# SPDX-License-Identifier: BSD-3-Clause
"""Bootstrap confidence intervals of percentiles (the median included): the
(1 - level)/2 and (1 + level)/2 quantiles of the statistic over resamples.

A percentile depends on a resample only through one or two of its order
statistics, drawn directly with the same law: the j-th smallest resample index
is ceil(n * U_(j)), U_(j) ~ Beta(j, n - j + 1), and the next one given U_(j) = u
is u + (1 - u) * Beta(1, n - j). So a resample costs two Beta draws whatever n
is: the exact bootstrap distribution in O(n log n + B). The random stream is
derived from the seed and the percentile only, so the same (values, percentile,
seed) gives the same interval whatever else is computed alongside."""

from __future__ import annotations

import math

import numpy as np

from mpiscope.stats.estimate import Estimate

DEFAULT_SEED = 1  # mpiscope run's default --seed
DEFAULT_RESAMPLES = 2000
METHOD = "bootstrap-percentile"


def _clean_sorted(values):
    a = np.asarray(values, dtype=np.float64).ravel()
    return np.sort(a[~np.isnan(a)])


def _check_percent(percent):
    if not 0.0 <= percent <= 100.0:
        raise ValueError(f"percentile must be within [0, 100], not {percent}")


def rng_for(seed: int, percent: float) -> np.random.Generator:
    """The generator used for `percent` under `seed` (seed >= 0)."""
    if seed < 0:
        raise ValueError("seed must be >= 0")
    # Percentiles are keyed to 1e-6 of a percent: 50 and 50.0 give one stream.
    return np.random.default_rng([int(seed), int(round(percent * 1e6))])


def percentile_of_sorted(a: np.ndarray, percent: float) -> float:
    """np.percentile's default (linear interpolation) on sorted, NaN-free `a`."""
    n = len(a)
    h = (n - 1) * percent / 100.0
    k = min(int(math.floor(h)), n - 1)
    f = h - k
    if f == 0.0 or k + 1 >= n:
        return float(a[k])
    return float(a[k] + f * (a[k + 1] - a[k]))


def _order_index(n, u):
    """1-based index ceil(n * u) of the resample order statistic, within 1..n."""
    return np.clip(np.ceil(n * u), 1, n).astype(np.int64)


def replicates_of_sorted(a: np.ndarray, percent: float, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """`n_boot` bootstrap replicates of the `percent` percentile of sorted `a`
    (NaN-free, at least one value), with np.percentile's linear interpolation."""
    n = len(a)
    if n == 0:
        raise ValueError("no values to resample")
    h = (n - 1) * percent / 100.0
    k = min(int(math.floor(h)), n - 1)
    f = h - k
    j = k + 1  # 1-based rank of the lower order statistic
    u = rng.beta(j, n - j + 1, size=n_boot)
    lower = a[_order_index(n, u) - 1]
    if f == 0.0 or j >= n:
        return lower
    u_next = u + (1.0 - u) * rng.beta(1, n - j, size=n_boot)
    upper = a[_order_index(n, u_next) - 1]
    return lower + f * (upper - lower)


def percentile_replicates(
    values, percent: float, n_boot: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> np.ndarray:
    """Bootstrap replicates of a percentile (NaNs ignored), for callers that
    combine them, e.g. a ratio of two medians from independent resamples."""
    _check_percent(percent)
    return replicates_of_sorted(_clean_sorted(values), percent, n_boot, rng_for(seed, percent))


def method_label(n_boot: int, seed: int) -> str:
    return f"{METHOD} ({n_boot} resamples, seed {seed})"


def interval_of_replicates(point: float, reps: np.ndarray, level: float, method: str) -> Estimate:
    """Percentile interval and standard error of bootstrap replicates."""
    if not 0.0 < level < 1.0:
        raise ValueError("level must be between 0 and 1")
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(reps, [tail, 1.0 - tail])
    # Shifted by a replicate: exact for a constant sample, and no cancellation.
    stderr = float(np.std(reps - reps[0], ddof=1)) if len(reps) > 1 else math.nan
    return Estimate(point=float(point), stderr=stderr, level=level, low=float(low), high=float(high), method=method)


def _nan_estimate(level, method):
    return Estimate(math.nan, math.nan, level, math.nan, math.nan, method)


def percentile_estimate_sorted(
    a: np.ndarray, percent: float, level: float = 0.95, seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_RESAMPLES
) -> Estimate:
    """percentile_estimate on sorted, NaN-free values (skips the sort)."""
    _check_percent(percent)
    if not 0.0 < level < 1.0:
        raise ValueError("level must be between 0 and 1")
    if n_boot < 2:
        raise ValueError("n_boot must be at least 2")
    method = method_label(n_boot, seed)
    if len(a) == 0:
        return _nan_estimate(level, method)
    point = percentile_of_sorted(a, percent)
    reps = replicates_of_sorted(a, percent, n_boot, rng_for(seed, percent))
    return interval_of_replicates(point, reps, level, method)


def percentile_estimate(
    values, percent: float, level: float = 0.95, seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_RESAMPLES
) -> Estimate:
    """A percentile (0-100, linear interpolation as np.percentile) with its
    percentile-bootstrap confidence interval and standard error (the sd of
    the replicates). NaNs are ignored; no values give NaNs. A constant
    sample gives that constant with zero width."""
    return percentile_estimate_sorted(_clean_sorted(values), percent, level, seed, n_boot)


def median_estimate(values, level: float = 0.95, seed: int = DEFAULT_SEED, n_boot: int = DEFAULT_RESAMPLES) -> Estimate:
    """The median with its percentile-bootstrap confidence interval."""
    return percentile_estimate(values, 50.0, level, seed, n_boot)
