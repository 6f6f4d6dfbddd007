# SPDX-License-Identifier: BSD-3-Clause
"""Variation between launches, separated from variation within a launch
(`mpiscope run --launches K`): a one-way random-effects model on the launch
medians, solved by moments (medians, not means: timings are skewed and
tailed), gives the between-launch variance; the within-launch sd is the
robust sd around each launch's median; their intraclass correlation is the
share of a sample's variance due to its launch, and a Kruskal–Wallis test
says whether the launches differ at all. Method: docs/explanation/
statistics.md, "Launch-to-launch variation"."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import kruskal

from mpiscope.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, percentile_estimate
from mpiscope.stats.summary import NORMAL_MAD_SCALE

ONE_LAUNCH = "one launch: no between-launch variation"


def launch_variation(
    values, launch, seed: int = DEFAULT_SEED, level: float = 0.95, n_boot: int = DEFAULT_RESAMPLES
) -> dict:
    """Per-launch medians (bootstrap Estimates; launch k's uses seed + k) and the
    between- and within-launch spread of `values` (non-finite ones ignored).

    Returns {"n_launches", "launches": [{"launch", "n", "median"}], "within_sd",
    "between_sd", "between_sd_raw" (sd of the launch medians, noise included),
    "ratio" (between / within), "icc", "relative_between_sd" (over the median of
    the launch medians), "test": {"name", "statistic", "p_value"} or None,
    "method", "seed", "note"}. With one launch the between-launch entries are None
    and the note says so; with no values, n_launches is 0."""
    v = np.asarray(values, dtype=np.float64).ravel()
    g = np.asarray(launch).ravel()
    if len(v) != len(g):
        raise ValueError("values and launch differ in length")
    keep = np.isfinite(v)
    v, g = v[keep], g[keep]
    ids = np.unique(g)
    out: dict = {
        "n_launches": int(len(ids)),
        "launches": [],
        "within_sd": None,
        "between_sd": None,
        "between_sd_raw": None,
        "ratio": None,
        "icc": None,
        "relative_between_sd": None,
        "test": None,
        "seed": seed,
        "method": (
            "random effects on launch medians (moments; bootstrap standard "
            "errors), within: 1.4826·MAD around each launch's median; "
            "Kruskal-Wallis test"
        ),
        "note": None,
    }
    if len(ids) == 0:
        out["note"] = "no samples"
        return out
    groups = [v[g == k] for k in ids]
    meds = []
    residuals = []
    for k, x in zip(ids.tolist(), groups):
        # One seed per launch: each launch's interval is reproducible by itself.
        est = percentile_estimate(x, 50.0, level, seed=seed + int(k), n_boot=n_boot)
        out["launches"].append({"launch": int(k), "n": int(len(x)), "median": est})
        meds.append(est)
        residuals.append(x - est.point)
    within = float(np.median(np.abs(np.concatenate(residuals)))) * NORMAL_MAD_SCALE
    out["within_sd"] = within
    if len(ids) == 1:
        out["note"] = ONE_LAUNCH
        return out
    points = np.array([m.point for m in meds])
    se2 = np.array([m.stderr**2 if math.isfinite(m.stderr) else 0.0 for m in meds])
    raw_var = float(np.var(points, ddof=1))
    between_var = max(raw_var - float(np.mean(se2)), 0.0)
    between = math.sqrt(between_var)
    out["between_sd_raw"] = math.sqrt(raw_var)
    out["between_sd"] = between
    total = between_var + within * within
    out["icc"] = between_var / total if total > 0 else None
    out["ratio"] = between / within if within > 0 else None
    centre = float(np.median(points))
    out["relative_between_sd"] = between / abs(centre) if centre else None
    if all(len(x) >= 1 for x in groups) and len(np.unique(v)) > 1:
        stat, p = kruskal(*groups)
        out["test"] = {"name": "Kruskal-Wallis", "statistic": float(stat), "p_value": float(p)}
    return out
