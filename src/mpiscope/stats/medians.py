# SPDX-License-Identifier: BSD-3-Clause
"""Bootstrap replicates of sample medians for fits and comparisons (the
draws themselves come from bootstrap.replicates_of_sorted, exact at any n),
and percentile intervals of replicates that may be infinite (a bandwidth
from a zero time)."""

from __future__ import annotations

import numpy as np

from mpiscope.stats.bootstrap import replicates_of_sorted


def bootstrap_medians(values, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """`n_boot` bootstrap replicates of the median of `values` (NaNs ignored),
    drawn from `rng` (give each sample its own stream position: two samples
    resampled from one generator in turn are independent). No values: all NaN."""
    a = np.asarray(values, dtype=np.float64).ravel()
    a = np.sort(a[~np.isnan(a)])
    if len(a) == 0:
        return np.full(n_boot, np.nan)
    return replicates_of_sorted(a, 50.0, n_boot, rng)


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
