# SPDX-License-Identifier: BSD-3-Clause
"""Speedups of configurations against a baseline, the launch as the unit (`mpiscope
app compare`); pure computation.

A launch gives one number (its wall time, or a figure it prints; lower is better);
per configuration, the median of its valid launches. Against the baseline:
speedup = baseline median / configuration median (above 1: faster), with a
percentile bootstrap interval (each side resampled, seeded) and the Mann-Whitney
U test over launches (`compare.compare_samples`); the verdict by compare's rule
(p < alpha and the interval outside the noise band), "insufficient" below
`compare.min_samples(alpha)` launches a side, no speedup without a valid launch."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mpiscope.stats.compare import (
    DEFAULT_ALPHA,
    DEFAULT_BOOT,
    DEFAULT_NOISE,
    DEFAULT_SEED,
    INSUFFICIENT,
    compare_samples,
)
from mpiscope.stats.estimate import Estimate
from mpiscope.stats.medians import replicate_stderr

BASELINE = "baseline"  # the verdict of the baseline's own row
NO_VALUE = "no valid launch"  # the verdict of a configuration that has no usable value
CI_METHOD = "bootstrap percentile over launches (each configuration resampled independently)"


@dataclass(frozen=True)
class Speedup:
    config: str
    n: int  # valid launches
    median: float  # of the valid launches' values; NaN without one
    speedup: Estimate | None  # baseline median / this median; None for the baseline, or no value
    p_value: float | None  # Mann-Whitney U over launches, this against the baseline
    verdict: str  # faster / slower / same / insufficient / baseline / no valid launch

    def to_dict(self) -> dict:
        return {
            "config": self.config,
            "n": self.n,
            "median": self.median,
            "speedup": self.speedup.to_dict() if self.speedup else None,
            "p_value": self.p_value,
            "verdict": self.verdict,
        }


def _inverted(ratio: Estimate, reps) -> Estimate:
    """The speedup from the time ratio B / A and its bootstrap replicates."""
    with np.errstate(divide="ignore", invalid="ignore"):
        inverse = 1.0 / np.asarray(reps, dtype=np.float64)
    return Estimate(
        1.0 / ratio.point, replicate_stderr(inverse), ratio.level, 1.0 / ratio.high, 1.0 / ratio.low, CI_METHOD
    )


def speedups(
    values: dict,
    baseline: str,
    *,
    noise: float = DEFAULT_NOISE,
    alpha: float = DEFAULT_ALPHA,
    level: float = 0.95,
    seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_BOOT,
) -> list[Speedup]:
    """One Speedup per configuration of `values` {name: valid launches' values}, in
    its order; `baseline` names the configuration the others are against."""
    rng = np.random.default_rng(seed)
    base = np.asarray(values[baseline], dtype=np.float64)
    base_ok = len(base) > 0 and float(np.median(base)) > 0
    out = []
    for name, vals in values.items():
        v = np.asarray(vals, dtype=np.float64)
        median = float(np.median(v)) if len(v) else math.nan
        if name == baseline:
            out.append(Speedup(name, len(v), median, None, None, BASELINE))
        elif not (base_ok and len(v) and median > 0):
            out.append(Speedup(name, len(v), median, None, None, NO_VALUE))
        else:
            ratio, p, verdict, reps = compare_samples(
                base, v, rng, noise=noise, alpha=alpha, level=level, n_boot=n_boot
            )
            out.append(Speedup(name, len(v), median, _inverted(ratio, reps), p, verdict))
    return out


def narrow_enough(results: list[Speedup], ci_width: float) -> bool:
    """The stopping rule's test: every speedup has a verdict (enough valid
    launches on both sides) and an interval whose half-width is within
    `ci_width` of it."""
    others = [r for r in results if r.verdict != BASELINE]
    if not others or any(r.speedup is None or r.verdict == INSUFFICIENT for r in others):
        return False
    return all(r.speedup.relative_halfwidth() <= ci_width for r in others)
