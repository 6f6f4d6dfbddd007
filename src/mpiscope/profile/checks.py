# SPDX-License-Identifier: BSD-3-Clause
"""A profile's trace table (profile_trace.parquet) checked as it is read
back: the columns ingest writes, ranks and peers (world ranks) of the run,
byte counts and times the profiler can record. A damaged one
is refused naming the file (UsageError), never exported, simulated or
printed."""

from __future__ import annotations

import numpy as np

from mpiscope.common.errors import UsageError

COLUMNS = ("rank", "call", "peer", "comm_size", "bytes", "t_start", "t_end")
MAX_BYTES = 2**53  # bytes of one call: beyond, a double no longer counts them
MAX_SPAN_S = 366 * 86400  # a traced run longer than a year is a damaged time


def trace(t, np_ranks, path, hint):
    """`t` (the trace as a DataFrame) when it holds what ingest writes."""
    problem = _problem(t, np_ranks)
    if problem:
        raise UsageError(f"the trace {path} is damaged: {problem}; {hint}")
    return t


def _problem(t, np_ranks) -> str | None:
    missing = [c for c in COLUMNS if c not in t.columns]
    if missing:
        return f"it has no column '{missing[0]}' (another table in its place?)"
    try:
        rank, peer, size, nbytes = (t[c].to_numpy(dtype=np.float64) for c in ("rank", "peer", "comm_size", "bytes"))
        start, end = t["t_start"].to_numpy(dtype=np.float64), t["t_end"].to_numpy(dtype=np.float64)
    except (TypeError, ValueError):
        return "its columns are not numbers"
    world = np_ranks or np.inf
    if not ((rank >= 0) & (rank < world)).all():
        return "a rank the run does not have"
    if not ((peer >= -1) & (peer < world) & (size >= 0) & (size <= world)).all():
        return "a peer or a communicator size the run does not have"  # peers are world ranks, -1 none
    if not ((nbytes >= 0) & (nbytes <= MAX_BYTES)).all():
        return f"a call of more than {MAX_BYTES} bytes"
    if not (np.isfinite(start).all() and np.isfinite(end).all()) or (end < start).any():
        return "a call without finite times, or one that ends before it starts"
    if len(start) and end.max() - start.min() > MAX_SPAN_S:
        return "times more than a year apart"
    return None
