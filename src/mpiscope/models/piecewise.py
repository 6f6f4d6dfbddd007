# SPDX-License-Identifier: BSD-3-Clause
"""Piecewise-linear Hockney fit with breakpoints chosen from the data: MPI
libraries switch protocols with the message size, each with its own α and β.
For each number of segments K, dynamic programming finds the best cut of the
sorted sizes (residuals weighted by each median's scale), and

    BIC(K) = N·ln(RSS_K / N) + (2K + 3(K − 1))·ln N

chooses K (a breakpoint counts as three parameters). A break is reported as
the two measured sizes it lies between; a segment needs `min_points` sizes.
Method: docs/explanation/loggp.md, "Hockney lines and zone tables"."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mpiscope.models.curves import Curve
from mpiscope.models.hockney import LineFit, make_line_fit

SEGMENT_METHOD = "weighted least squares on per-size medians"
CRITERION = "BIC"
_RSS_FLOOR_PER_POINT = 1e-6  # (0.1% of a scale)²
BREAK_PARAMS = 3  # parameters a breakpoint counts as (see above)


@dataclass(frozen=True)
class Piecewise:
    """Segments in size order and the breaks between them."""

    segments: tuple  # LineFit per segment
    breaks: tuple  # ((last size below, first size above), ...)
    criterion: str
    scores: dict  # K -> criterion value (lower is better)
    min_points: int

    @property
    def n_segments(self) -> int:
        return len(self.segments)

    def to_dict(self) -> dict:
        return {
            "n_segments": self.n_segments,
            "segments": [s.to_dict() for s in self.segments],
            "breaks": [list(b) for b in self.breaks],
            "criterion": self.criterion,
            "scores": {str(k): v for k, v in self.scores.items()},
            "min_points": self.min_points,
        }


def _design(x, scale, x_unit):
    return np.column_stack([1.0 / scale, (x / x_unit) / scale])


def wls_line(x, y, scale) -> tuple[float, float, float]:
    """Least squares line with residuals divided by `scale`: (α, β, RSS)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    scale = np.asarray(scale, dtype=np.float64)
    x_unit = max(float(np.max(np.abs(x))), 1.0)  # conditioning
    A = _design(x, scale, x_unit)
    coef, *_ = np.linalg.lstsq(A, y / scale, rcond=None)
    rss = float(np.sum((y / scale - A @ coef) ** 2))
    return float(coef[0]), float(coef[1] / x_unit), rss


def wls_lines(x, Y, scale) -> tuple[np.ndarray, np.ndarray]:
    """wls_line for every row of Y (the same design): (α, β), each (B,)."""
    x = np.asarray(x, dtype=np.float64)
    scale = np.asarray(scale, dtype=np.float64)
    x_unit = max(float(np.max(np.abs(x))), 1.0)
    pinv = np.linalg.pinv(_design(x, scale, x_unit))  # (2, m)
    coef = pinv @ (np.atleast_2d(Y) / scale).T  # (2, B)
    return coef[0], coef[1] / x_unit


def segment(x, y, scale, min_points: int = 3) -> tuple[list, dict]:
    """Best segmentation of the points (sorted by x) under BIC.

    Returns ([(first index, last index), ...], {K: BIC}). One segment
    always is a candidate, whatever the number of points (at least two).
    """
    n = len(x)
    if n < 2:
        raise ValueError("a piecewise fit needs at least two sizes")
    if min_points < 2:
        raise ValueError("min_points must be at least 2")
    cost = np.full((n, n), np.inf)
    for i in range(n):
        for j in range(i + 1, n):
            if j - i + 1 >= min_points or (i == 0 and j == n - 1):
                cost[i, j] = wls_line(x[i : j + 1], y[i : j + 1], scale[i : j + 1])[2]

    k_max = max(1, n // min_points)
    # best[k, j]: least RSS covering points 0..j with k segments; prev: where the last starts.
    best = np.full((k_max + 1, n), np.inf)
    prev = np.zeros((k_max + 1, n), dtype=np.int64)
    best[1] = cost[0]
    for k in range(2, k_max + 1):
        for j in range(n):
            starts = np.arange(1, j + 1)
            if len(starts) == 0:
                continue
            total = best[k - 1, starts - 1] + cost[starts, j]
            m = int(np.argmin(total))
            best[k, j], prev[k, j] = total[m], starts[m]

    floor = _RSS_FLOOR_PER_POINT * n
    scores = {}
    for k in range(1, k_max + 1):
        rss = best[k, n - 1]
        if np.isfinite(rss):
            params = 2 * k + BREAK_PARAMS * (k - 1)
            scores[k] = float(n * math.log(max(rss, floor) / n) + params * math.log(n))
    k_best = min(scores, key=lambda k: (scores[k], k))

    bounds, j = [], n - 1
    for k in range(k_best, 0, -1):
        i = int(prev[k, j]) if k > 1 else 0
        bounds.append((i, j))
        j = i - 1
    return bounds[::-1], scores


def piecewise(curve: Curve, level: float = 0.95, min_points: int = 3) -> Piecewise:
    """Piecewise Hockney fit of a curve with at least two sizes."""
    if len(curve) < 2:
        raise ValueError(f"{curve.bench}: a piecewise fit needs at least two sizes")
    x = curve.sizes.astype(np.float64)
    bounds, scores = segment(x, curve.medians, curve.scales, min_points)
    segments = []
    for i, j in bounds:
        sl = slice(i, j + 1)
        alpha, beta, _ = wls_line(x[sl], curve.medians[sl], curve.scales[sl])
        boot_alpha, boot_beta = wls_lines(x[sl], curve.boot[:, sl], curve.scales[sl])
        segments.append(
            make_line_fit(curve.sizes[sl], curve.medians[sl], alpha, beta, boot_alpha, boot_beta, level, SEGMENT_METHOD)
        )
    breaks = tuple((int(curve.sizes[j]), int(curve.sizes[j + 1])) for _, j in bounds[:-1])
    return Piecewise(tuple(segments), breaks, CRITERION, scores, min_points)


def segment_of(pw: Piecewise, size: int) -> LineFit | None:
    """The segment whose size range holds `size` (None between or outside them)."""
    for s in pw.segments:
        if s.first_size <= size <= s.last_size:
            return s
    return None
