# SPDX-License-Identifier: BSD-3-Clause
"""Time charts of traced collective algorithms (the "diagramming tool" of Tan
and Strazdins (2002)): one row per rank, a bar from when each send or receive
was posted to when it completed, and an arrow for every message from its send
to the completion of the receive that matched it, all on the global clock.

This module holds a chart as data (which repetition, which events, where
each bar goes); report/timechart.py draws it; cli/timechart.py is the
command.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mpiscope.common.errors import UsageError
from mpiscope.store.trace import complete_reps, load_trace, select, traced_series


@dataclass
class Chart:
    """One repetition of one traced series, ready to draw."""

    bench: str
    algo: str
    size: int
    launch: int
    rep: int
    ranks: list  # rank numbers, in row order
    events: object  # pyarrow table of the repetition's events
    origin: float  # global time of x = 0 (the agreed start, or the first post)
    spans: dict  # rank -> (global start, global end) of the operation, when known
    sent: int = 0
    received: int = 0

    @property
    def title(self) -> str:
        return (
            f"{self.bench}/{self.algo}, {self.size} B, {len(self.ranks)} ranks: "
            f"repetition {self.rep} (launch {self.launch})"
        )


def _series_rows(run_dir, bench, algo, size, launch, table=None):
    """(rep -> {rank: (t_start, t_end, t_sched)}, sample values by rep) from
    samples.parquet (or `table`, the run's samples when already loaded)."""
    import pyarrow.compute as pc

    from mpiscope.store.samples import sample_values
    from mpiscope.store.ingest import load

    if table is None:
        try:
            table, _ = load(run_dir)
        except UsageError:
            return {}, {}
    mask = pc.and_(
        pc.and_(pc.equal(table["bench"], bench), pc.equal(table["algo"], algo)),
        pc.and_(pc.equal(table["size"], size), pc.equal(table["launch"], launch)),
    )
    sub = table.filter(mask)
    rows = {}
    for rep, rank, a, b, c in zip(*(sub[k].to_pylist() for k in ("rep", "rank", "t_start", "t_end", "t_sched"))):
        rows.setdefault(rep, {})[rank] = (a, b, c)
    try:
        smp = sample_values(table, bench, size, launch=launch, algo=algo)
        values = {int(r): float(v) for r, v in zip(smp.rep, smp.values)}
    except UsageError:
        values = {}
    return rows, values


def median_rep(values: dict, limit: int) -> int:
    """The repetition (below `limit`) whose time is the median of those traced."""
    reps = sorted((v, r) for r, v in values.items() if r < limit and np.isfinite(v))
    return reps[(len(reps) - 1) // 2][1] if reps else 0


def load_chart(run_dir, bench, algo, size, rep=None, launch=0, samples_table=None) -> Chart:
    """The chart of one repetition (default: the one with the median time)."""
    run_dir = Path(run_dir)
    table, blocks = load_trace(run_dir)
    present = traced_series(table)
    if (bench, algo, size) not in present:
        listed = ", ".join(f"{b}/{a} {s}" for b, a, s in present) or "none"
        raise UsageError(f"run {run_dir.name} has no trace of {bench}/{algo} at {size} B; traced: {listed}")
    limit = complete_reps(blocks, bench, algo, size, launch)
    if limit == 0:
        raise UsageError(
            f"no repetition of {bench}/{algo} at {size} B (launch {launch}) was traced completely on every rank"
        )
    rows, values = _series_rows(run_dir, bench, algo, size, launch, samples_table)
    if rep is None:
        rep = median_rep(values, limit)
    elif not 0 <= rep < limit:
        raise UsageError(f"--rep {rep}: repetitions 0..{limit - 1} were traced completely")
    events = select(table, bench, algo, size, launch, rep)
    ranks = sorted(set(events["rank"].to_pylist()) | set(rows.get(rep, {})))
    per_rank = rows.get(rep, {})
    scheds = [v[2] for v in per_rank.values() if v[2] is not None and np.isfinite(v[2])]
    posts = [t for t in events["t_post"].to_pylist() if t is not None and np.isfinite(t)]
    starts = [v[0] for v in per_rank.values() if v[0] is not None and np.isfinite(v[0])]
    origin = min(scheds) if scheds else min(starts + posts) if (starts or posts) else 0.0
    ops = events["op"].to_pylist()
    return Chart(
        bench,
        algo,
        size,
        launch,
        rep,
        ranks,
        events,
        origin,
        {r: (v[0], v[1]) for r, v in per_rank.items()},
        sent=ops.count("send"),
        received=ops.count("recv"),
    )


def lanes(events):
    """Where each event's bar goes: {(rank, seq): (op, post, done, y offset, height)}.

    Sends take the upper half of the rank's row, receives the lower half;
    operations of one kind that are in flight at the same time on a rank get
    lanes of their own (the first lane free when the operation is posted),
    so that no bar hides another."""
    cols = {k: events[k].to_pylist() for k in ("rank", "seq", "op", "t_post", "t_done")}
    groups = {}
    for i in range(events.num_rows):
        if cols["t_post"][i] is None or cols["t_done"][i] is None:
            continue
        groups.setdefault((cols["rank"][i], cols["op"][i]), []).append(i)
    out = {}
    for (rank, op), idx in groups.items():
        idx.sort(key=lambda i: (cols["t_post"][i], cols["seq"][i]))
        ends, lane = [], {}
        for i in idx:
            free = next((k for k, end in enumerate(ends) if end <= cols["t_post"][i]), None)
            if free is None:
                free = len(ends)
                ends.append(0.0)
            ends[free] = cols["t_done"][i]
            lane[i] = free
        h = 0.36 / len(ends)
        top = -0.4 if op == "send" else 0.04
        for i in idx:
            out[(rank, cols["seq"][i])] = (op, cols["t_post"][i], cols["t_done"][i], top + lane[i] * h, h * 0.9)
    return out
