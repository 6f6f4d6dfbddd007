# SPDX-License-Identifier: BSD-3-Clause
"""Variation between launches, separated from variation within a launch.

A run with several launches (mpiscope run --launches K) asks whether a
fresh mpirun — new process placement, new buffers, new clock
synchronization — changes the result more than repeating inside one launch
does. Timing samples are skewed and tailed (one retransmission is 200
times the median), so the decomposition is built on medians rather than
means, as a one-way random-effects model solved by moments:

    median of launch k = mu + b_k + e_k,  Var(b_k) = between², Var(e_k) = se_k²

where se_k is the bootstrap standard error of launch k's median. The
spread of the launch medians, less their average sampling variance, is the
between-launch variance (floored at 0). The within-launch sd is the robust
sd of every sample around its own launch's median (1.4826 · MAD). The
intraclass correlation between² / (between² + within²) is the share of a
sample's variance that is due to its launch. A Kruskal–Wallis test says
whether the launches' distributions differ at all.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import kruskal

from mpiscope.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED, percentile_estimate
from mpiscope.stats.summary import NORMAL_MAD_SCALE

ONE_LAUNCH = "one launch: no between-launch variation"


def launch_variation(values, launch, seed: int = DEFAULT_SEED, level: float = 0.95,
                     n_boot: int = DEFAULT_RESAMPLES) -> dict:
    """Per-launch medians (bootstrap Estimates; launch k's uses seed + k, so
    each is reproducible alone) and the between- and within-launch spread of
    `values` (non-finite ones ignored).

    Returns {"n_launches", "launches": [{"launch", "n", "median" (Estimate)}],
    "within_sd", "between_sd", "between_sd_raw" (sd of the launch medians,
    sampling noise included), "ratio" (between_sd / within_sd), "icc",
    "relative_between_sd" (between_sd / median of the launch medians),
    "test": {"name", "statistic", "p_value"} or None, "method", "seed",
    "note"}. With one launch the between-launch entries are None and the
    note says so; with no values, n_launches is 0.
    """
    v = np.asarray(values, dtype=np.float64).ravel()
    g = np.asarray(launch).ravel()
    if len(v) != len(g):
        raise ValueError("values and launch differ in length")
    keep = np.isfinite(v)
    v, g = v[keep], g[keep]
    ids = np.unique(g)
    out: dict = {"n_launches": int(len(ids)), "launches": [], "within_sd": None,
           "between_sd": None, "between_sd_raw": None, "ratio": None, "icc": None,
           "relative_between_sd": None, "test": None, "seed": seed,
           "method": ("random effects on launch medians (moments; bootstrap standard "
                      "errors), within: 1.4826·MAD around each launch's median; "
                      "Kruskal-Wallis test"),
           "note": None}
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
    se2 = np.array([m.stderr ** 2 if math.isfinite(m.stderr) else 0.0 for m in meds])
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
