# SPDX-License-Identifier: BSD-3-Clause
"""Per-benchmark curves for model fitting: the median time at every size, its
uncertainty and its bootstrap replicates.

Models are fitted to times. A bandwidth sample (bw, bibw) becomes the time one
message takes in the stream, size / bandwidth (for bibw counting both
directions' messages), so 1/β of a fitted line compares directly with the
bandwidth the benchmark reports and α is a message's cost in a full pipeline
(the gap, not the latency). Size 0 carries no bandwidth and is left out."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mpiscope.stats.medians import bootstrap_medians
from mpiscope.stats.summary import median_ci

# A median's uncertainty scale is floored at this fraction of it, so sizes
# measured very precisely do not take all the weight of a fit.
REL_SCALE_FLOOR = 0.005


@dataclass(frozen=True)
class Curve:
    """Medians of one bench × algo over its sizes, in seconds, sizes increasing.

    `scales` is each median's uncertainty (half the width of its confidence
    interval, floored at REL_SCALE_FLOOR of it); fits weight residuals by
    1/scale. `boot[k]` holds bootstrap replicate k of every median.
    """

    bench: str
    algo: str
    quantity: str
    sizes: np.ndarray
    medians: np.ndarray
    scales: np.ndarray
    counts: np.ndarray
    boot: np.ndarray
    dropped: tuple = field(default=())  # ((size, reason), ...)

    def __len__(self):
        return len(self.sizes)


def quantity(unit: str) -> str:
    """What the curve's values are, in words."""
    if unit == "B/s":
        return "time per message = size / bandwidth"
    return "time per operation"


def as_times(unit: str, size: int, values) -> np.ndarray:
    """Sample values as seconds: unchanged for latencies, size / value for
    bandwidths (see the module note)."""
    v = np.asarray(values, dtype=np.float64)
    if unit != "B/s":
        return v
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(v > 0, float(size) / v, np.nan)


def _scale(times, median, level):
    lo, hi = median_ci(times, level)
    half = 0.5 * (hi - lo) if np.isfinite(hi - lo) else 0.0
    return max(half, REL_SCALE_FLOOR * abs(median), 1e-15)


def build_curve(
    bench: str,
    algo: str,
    values_by_size: dict,
    rng: np.random.Generator,
    n_boot: int = 1000,
    level: float = 0.95,
    unit: str = "s",
) -> Curve:
    """Curve from {size: sample values as stored, in `unit` (s, or B/s for bandwidths)}.

    Sizes are visited in increasing order, each consuming `n_boot` draws of
    `rng`. Sizes with no usable sample are listed in `dropped`.
    """
    sizes, medians, scales, counts, boots, dropped = [], [], [], [], [], []
    for size in sorted(values_by_size):
        if unit == "B/s" and size == 0:
            dropped.append((size, "a 0-byte bandwidth says nothing about time"))
            continue
        t = as_times(unit, size, values_by_size[size])
        t = t[np.isfinite(t)]
        if len(t) == 0:
            dropped.append((size, "no valid samples"))
            continue
        med = float(np.median(t))
        sizes.append(int(size))
        medians.append(med)
        scales.append(_scale(t, med, level))
        counts.append(len(t))
        boots.append(bootstrap_medians(t, n_boot, rng))
    boot = np.column_stack(boots) if boots else np.empty((n_boot, 0))
    return Curve(
        bench,
        algo,
        quantity(unit),
        np.array(sizes, dtype=np.int64),
        np.array(medians),
        np.array(scales),
        np.array(counts, dtype=np.int64),
        boot,
        tuple(dropped),
    )


def run_curves(
    series, rng: np.random.Generator, n_boot: int = 1000, level: float = 0.95, bench: str | None = None
) -> list[Curve]:
    """One curve per bench × algo, in order of first appearance.

    `series` is [(bench, algo, size, Samples)] as series.all_series_samples
    returns; `bench` keeps only that benchmark.
    """
    grouped: dict = {}
    for b, algo, size, s in series:
        if bench is not None and b != bench:
            continue
        grouped.setdefault((b, algo, s.unit), {})[int(size)] = s.values
    return [build_curve(b, algo, by_size, rng, n_boot, level, unit) for (b, algo, unit), by_size in grouped.items()]
