# SPDX-License-Identifier: BSD-3-Clause
"""Hockney model T(n) = α + β·n of one benchmark, fitted robustly: a weighted
least-absolute-deviations line through the per-size medians (each residual
divided by its median's uncertainty, so small sizes decide α and large ones
β), found exactly by trying every pair of points. Intervals come from
refitting to the bootstrap replicates of the medians (Curve.boot); R² and the
largest relative residual say how well a line suits the curve. Derived: the
bandwidth 1/β and n½ = α/β. Base units throughout (seconds, bytes).
Method: docs/explanation/loggp.md, "Hockney lines and zone tables"."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from mpiscope.models.curves import Curve
from mpiscope.stats.estimate import Estimate
from mpiscope.stats.medians import percentile_interval, replicate_stderr

HOCKNEY_METHOD = "weighted least absolute deviations on per-size medians"
CI_METHOD = "bootstrap percentile (samples resampled within each size)"
_CHUNK = 64  # bootstrap replicates fitted at once (bounds the memory of the pair search)


@dataclass(frozen=True)
class LineFit:
    """α + β·n over sizes first_size..last_size, with derived quantities."""

    first_size: int
    last_size: int
    n_sizes: int
    alpha: Estimate  # s
    beta: Estimate  # s/B
    bandwidth: Estimate  # B/s, 1/β (inf when β <= 0)
    n_half: Estimate  # B, α/β (NaN when β <= 0)
    r2: float  # on the medians, unweighted
    max_rel_residual: float
    worst_size: int  # where the largest relative residual is
    method: str

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


# ---------------------------------------------------------------- fitting


def _pairs(x):
    i, j = np.triu_indices(len(x), k=1)
    keep = x[i] != x[j]
    return i[keep], j[keep]


def lad_lines(x, Y, w) -> tuple[np.ndarray, np.ndarray]:
    """Weighted LAD lines, one per row of Y: minimize Σ w·|y − α − β·x|.

    x: (n,) with at least two distinct values; Y: (B, n); w: (n,) > 0.
    Returns (α, β), each (B,). Ties between equally good lines go to the
    pair of points that comes first (lowest indices): results are
    deterministic.
    """
    x = np.asarray(x, dtype=np.float64)
    Y = np.atleast_2d(np.asarray(Y, dtype=np.float64))
    w = np.asarray(w, dtype=np.float64)
    i, j = _pairs(x)
    if len(i) == 0:
        raise ValueError("a line needs at least two distinct sizes")
    dx = x[j] - x[i]
    alphas = np.empty(len(Y))
    betas = np.empty(len(Y))
    for start in range(0, len(Y), _CHUNK):
        y = Y[start : start + _CHUNK]
        beta = (y[:, j] - y[:, i]) / dx  # (b, P)
        alpha = y[:, i] - beta * x[i]
        resid = y[:, None, :] - alpha[:, :, None] - beta[:, :, None] * x
        cost = np.abs(resid) @ w  # (b, P)
        best = np.argmin(cost, axis=1)
        rows = np.arange(len(y))
        alphas[start : start + len(y)] = alpha[rows, best]
        betas[start : start + len(y)] = beta[rows, best]
    return alphas, betas


def lad_line(x, y, w) -> tuple[float, float]:
    """The weighted LAD line (α, β) through points (x, y) with weights w."""
    a, b = lad_lines(x, np.asarray(y, dtype=np.float64)[None, :], w)
    return float(a[0]), float(b[0])


# ---------------------------------------------------------------- results


def _estimate(point, replicates, level):
    lo, hi = percentile_interval(replicates, level)
    return Estimate(float(point), replicate_stderr(replicates), level, lo, hi, CI_METHOD)


def _bandwidth(beta):
    beta = np.asarray(beta, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.where(beta > 0, 1.0 / np.where(beta > 0, beta, 1.0), np.inf)


def _n_half(alpha, beta):
    alpha = np.asarray(alpha, dtype=np.float64)
    beta = np.asarray(beta, dtype=np.float64)
    return np.where(beta > 0, alpha / np.where(beta > 0, beta, 1.0), np.nan)


def line_estimates(alpha, beta, boot_alpha, boot_beta, level) -> dict:
    """Estimates of α, β, 1/β and α/β from a point fit and its replicates."""
    return {
        "alpha": _estimate(alpha, boot_alpha, level),
        "beta": _estimate(beta, boot_beta, level),
        "bandwidth": _estimate(_bandwidth(beta), _bandwidth(boot_beta), level),
        "n_half": _estimate(_n_half(alpha, beta), _n_half(boot_alpha, boot_beta), level),
    }


def fit_quality(x, y, alpha, beta) -> dict:
    """R² of the line on (x, y) (unweighted), and the largest |residual| / y
    with the x where it occurs. R² is 1 for an exact fit, NaN when y is
    constant and the fit not exact."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    resid = y - (alpha + beta * x)
    ss_res = float(np.sum(resid**2))
    ss_tot = float(np.sum((y - y.mean()) ** 2))
    tiny = 1e-24 * max(float(np.sum(y**2)), 1e-300)
    if ss_res <= tiny:
        r2 = 1.0
    elif ss_tot > 0:
        r2 = 1.0 - ss_res / ss_tot
    else:
        r2 = math.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.abs(resid) / np.abs(y)
    rel = np.where(np.isfinite(rel), rel, 0.0)
    k = int(np.argmax(rel))
    return {"r2": r2, "max_rel_residual": float(rel[k]), "worst_size": int(x[k])}


def make_line_fit(sizes, medians, alpha, beta, boot_alpha, boot_beta, level, method) -> LineFit:
    est = line_estimates(alpha, beta, boot_alpha, boot_beta, level)
    q = fit_quality(sizes, medians, alpha, beta)
    return LineFit(
        int(sizes[0]),
        int(sizes[-1]),
        len(sizes),
        est["alpha"],
        est["beta"],
        est["bandwidth"],
        est["n_half"],
        q["r2"],
        q["max_rel_residual"],
        q["worst_size"],
        method,
    )


def hockney(curve: Curve, level: float = 0.95) -> LineFit:
    """Robust Hockney fit of a curve with at least two sizes."""
    if len(curve) < 2:
        raise ValueError(f"{curve.bench}: a Hockney fit needs at least two sizes")
    x = curve.sizes.astype(np.float64)
    w = 1.0 / curve.scales
    alpha, beta = lad_line(x, curve.medians, w)
    boot_alpha, boot_beta = lad_lines(x, curve.boot, w)
    return make_line_fit(curve.sizes, curve.medians, alpha, beta, boot_alpha, boot_beta, level, HOCKNEY_METHOD)
