# SPDX-License-Identifier: BSD-3-Clause
"""Which ranks hold a collective back, how often, and by how much.

A collective (or ring) repetition ends when its slowest rank ends. Each taking
part rank's time is, with window sync (finite t_sched), its global t_end minus
the agreed start (the lowest rank's t_sched), with barrier sync its own
t_end - t_start. The largest finished last (ties: the lowest rank, as
samples.py attributes the sample); its margin is how much it trailed the
second-to-last. Repetitions with an invalid row or a non-finite time are left
out and counted, as samples.py leaves their samples out."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


@dataclass
class RankTimes:
    """Per-rank times of one series: times[i, j] is rank ranks[j]'s time in
    repetition rep[i] of launch launch[i] (NaN if that rank has no row);
    valid[i] is False when the repetition's sample is not trusted."""

    launch: np.ndarray
    rep: np.ndarray
    ranks: np.ndarray
    times: np.ndarray
    valid: np.ndarray
    sync: str  # "window" or "barrier"


def rank_times(series: pa.Table) -> RankTimes:
    """The rank × repetition matrix of per-rank times of one series' rows
    (idle ranks left out). Fit for a heat map as it is."""
    member = series.filter(pc.not_equal(series["role"], "idle"))
    launch = member["launch"].to_numpy().astype(np.int64)
    rep = member["rep"].to_numpy().astype(np.int64)
    rank = member["rank"].to_numpy().astype(np.int64)
    if len(rank) == 0:
        e = np.array([], dtype=np.int64)
        return RankTimes(e, e, e, np.empty((0, 0)), np.array([], dtype=bool), "window")
    ranks, rcol = np.unique(rank, return_inverse=True)
    groups, grow = np.unique(launch * (int(rep.max()) + 1) + rep, return_inverse=True)
    ng, nr = len(groups), len(ranks)

    t_sched = member["t_sched"].to_numpy()
    # The agreed start is the lowest taking-part rank's t_sched (rank 0's when present).
    lowest = np.full(ng, np.iinfo(np.int64).max)
    np.minimum.at(lowest, grow, rcol)
    sched = np.full(ng, np.nan)
    is_lowest = rcol == lowest[grow]
    sched[grow[is_lowest]] = t_sched[is_lowest]
    window = np.isfinite(sched)
    sync = "window" if window.any() else "barrier"

    g_end = member["t_end"].to_numpy()
    local = member["t_end_local"].to_numpy() - member["t_start_local"].to_numpy()
    per_row = np.where(window[grow], g_end - sched[grow], local)

    times = np.full((ng, nr), np.nan)
    times[grow, rcol] = per_row
    valid = np.ones(ng, dtype=bool)
    np.logical_and.at(valid, grow, member["valid"].to_numpy(zero_copy_only=False))
    present = np.zeros((ng, nr), dtype=bool)
    present[grow, rcol] = True
    valid &= np.isfinite(np.where(present, times, 0.0)).all(axis=1)
    first = np.zeros(ng, dtype=np.int64)
    first[grow] = np.arange(len(grow))
    return RankTimes(launch[first], rep[first], ranks, times, valid, sync)


def _q(x, p):
    return float(np.percentile(x, p)) if len(x) else None


def slowest_ranks(series: pa.Table) -> dict:
    """Who finishes last, and each rank's time distribution.

    Returns {"sync", "time" (what a rank's time is), "n_reps" (valid
    repetitions used), "n_invalid", "margin_median_s" (all repetitions),
    "ranks": [{"rank", "last_count", "last_share", "margin_median_s",
    "margin_max_s" (None when never last), "n", "time_min_s",
    "time_median_s", "time_max_s"}] in rank order, "last_order": ranks by
    how often they were last, most first, never-last ranks left out}.
    """
    rt = rank_times(series)
    times = rt.times[rt.valid]
    nrep, nr = times.shape if times.ndim == 2 else (0, 0)
    out: dict = {
        "sync": rt.sync,
        "time": ("global t_end - agreed global start" if rt.sync == "window" else "local t_end - t_start"),
        "n_reps": int(nrep),
        "n_invalid": int((~rt.valid).sum()),
        "margin_median_s": None,
        "ranks": [],
        "last_order": [],
    }
    if nrep == 0:
        return out
    filled = np.where(np.isnan(times), -np.inf, times)  # a rank without a row is never last
    last = np.argmax(filled, axis=1)  # first maximum: the lowest rank
    top = filled[np.arange(nrep), last]
    if nr > 1:
        rest = filled.copy()
        rest[np.arange(nrep), last] = -np.inf
        margin = top - rest.max(axis=1)
        margin[~np.isfinite(margin)] = np.nan
    else:
        margin = np.full(nrep, np.nan)
    ok = np.isfinite(margin)
    if ok.any():
        out["margin_median_s"] = float(np.median(margin[ok]))
    counts = np.bincount(last, minlength=nr)
    for j, r in enumerate(rt.ranks.tolist()):
        col = times[:, j]
        col = col[np.isfinite(col)]
        mine = margin[(last == j) & ok]
        out["ranks"].append(
            {
                "rank": int(r),
                "last_count": int(counts[j]),
                "last_share": float(counts[j]) / nrep,
                "margin_median_s": float(np.median(mine)) if len(mine) else None,
                "margin_max_s": float(mine.max()) if len(mine) else None,
                "n": int(len(col)),
                "time_min_s": float(col.min()) if len(col) else None,
                "time_median_s": _q(col, 50.0),
                "time_max_s": float(col.max()) if len(col) else None,
            }
        )
    order = np.argsort(-counts, kind="stable")
    out["last_order"] = [int(rt.ranks[j]) for j in order if counts[j] > 0]
    return out
