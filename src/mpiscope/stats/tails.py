# SPDX-License-Identifier: BSD-3-Clause
"""Tail tables: how far the slow samples lie from the fast ones, after the
MPIBench tables of Hamid (2008), chapter 5: by multiples of the minimum
(`by_min`), by standard deviations above the mean (`by_sd`) and by whole
retransmission timeouts above the minimum (`by_rto`). Each is a list of rows
{"label", "k", "low", "high", "count", "share"} (low inclusive, high
exclusive, None unbounded) whose shares add up to 1; a table that cannot be
formed is empty. Method: docs/explanation/statistics.md, "Tails"."""

from __future__ import annotations

import math

import numpy as np

from mpiscope.stats.summary import mean_var

DEFAULT_K = 5


def _sorted_clean(values):
    a = np.asarray(values, dtype=np.float64).ravel()
    return np.sort(a[np.isfinite(a)])


def _rows(a, edges, labels, ks):
    """Counts of sorted `a` in [-inf, e0), [e0, e1), ..., [e_last, inf)."""
    pos = np.searchsorted(a, edges, side="left")
    counts = np.diff(np.concatenate([[0], pos, [len(a)]]))
    bounds = [None] + [float(e) for e in edges] + [None]
    n = len(a)
    return [
        {
            "label": labels[i],
            "k": ks[i],
            "low": bounds[i],
            "high": bounds[i + 1],
            "count": int(counts[i]),
            "share": float(counts[i]) / n,
        }
        for i in range(len(counts))
    ]


def by_min(values, kmax: int = DEFAULT_K) -> list[dict]:
    """Share of samples in [k·min, (k+1)·min), k = 1..kmax, then >= (kmax+1)·min."""
    a = _sorted_clean(values)
    if len(a) == 0 or not a[0] > 0:
        return []
    lo = a[0]
    edges = [k * lo for k in range(2, kmax + 2)]
    labels = [f"[{k}·min, {k + 1}·min)" for k in range(1, kmax + 1)] + [f">= {kmax + 1}·min"]
    rows = _rows(a, edges, labels, list(range(1, kmax + 2)))
    rows[0]["low"] = float(lo)  # nothing lies below the minimum
    return rows


def by_sd(values, kmax: int = DEFAULT_K) -> list[dict]:
    """Share below mean + sd, in [mean + k·sd, mean + (k+1)·sd) for k = 1..kmax,
    then >= mean + (kmax+1)·sd (sd: sample standard deviation)."""
    a = _sorted_clean(values)
    n, m, var = mean_var(a)
    if n < 2 or not var > 0:
        return []
    sd = math.sqrt(var)
    edges = [m + k * sd for k in range(1, kmax + 2)]
    labels = (
        ["< mean+sd"] + [f"[mean+{k}·sd, mean+{k + 1}·sd)" for k in range(1, kmax + 1)] + [f">= mean+{kmax + 1}·sd"]
    )
    return _rows(a, edges, labels, list(range(0, kmax + 2)))


def by_rto(values, rto_s: float, kmax: int = 3) -> list[dict]:
    """Share in [min, min + RTO), then [min + k·RTO, min + (k+1)·RTO) for
    k = 1..kmax, then >= min + (kmax+1)·RTO: row k is "k timeouts" if every
    sample without a timeout lies within one RTO of the fastest."""
    a = _sorted_clean(values)
    if len(a) == 0 or not rto_s > 0:
        return []
    lo = a[0]
    edges = [lo + k * rto_s for k in range(1, kmax + 2)]
    labels = ["no RTO"] + [f"{k}×RTO" for k in range(1, kmax + 1)] + [f">= {kmax + 1}×RTO"]
    rows = _rows(a, edges, labels, list(range(0, kmax + 2)))
    rows[0]["low"] = float(lo)
    return rows
