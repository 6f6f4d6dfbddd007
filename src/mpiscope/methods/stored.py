# SPDX-License-Identifier: BSD-3-Clause
"""A run's method series as stored (store/methods_table.py): one object per
method × benchmark × size × launch, with its description and its rows, and
the arrays the derivations read (per call on every rank, or per loop)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mpiscope.common.errors import UsageError
from mpiscope.common.sizes import MAX_SIZE
from mpiscope.store.ingest import SAMPLES_FILE
from mpiscope.store.layout import rebuild_hint
from mpiscope.store.methods_table import read_methods

MEASURED, WARMUP, CALIBRATION = 0, 1, 2
LATE, TOO_LONG, REJECTED = 1, 2, 4
WINDOW = 64  # messages in a bandwidth window (OSU's osu_bw, the references)


@dataclass
class Grid:
    """Rows of the ranks that have them, aligned by repetition: arrays of
    shape (ranks, repetitions); `ranks` their numbers, ascending."""

    ranks: np.ndarray
    start_local: np.ndarray
    end_local: np.ndarray
    start: np.ndarray  # global clock
    end: np.ndarray
    calls: np.ndarray
    flags: np.ndarray
    root: np.ndarray
    batch: np.ndarray

    @property
    def durations(self) -> np.ndarray:
        """Each rank's own span of each repetition (its local timer)."""
        return self.end_local - self.start_local

    def row(self, rank: int) -> int:
        return int(np.flatnonzero(self.ranks == rank)[0])


@dataclass
class MethodSeries:
    """One method series: its context entry (how the tool times it: timing,
    start, root, cache, ranks; count, datatype, params) and its rows."""

    entry: dict
    rows: dict  # column -> numpy array, in rank then repetition order

    method = property(lambda self: self.entry["method"])
    bench = property(lambda self: self.entry["bench"])
    size = property(lambda self: int(self.entry["size"]))
    launch = property(lambda self: int(self.entry.get("launch", 0)))
    timing = property(lambda self: self.entry.get("timing"))
    start = property(lambda self: self.entry.get("start"))
    params = property(lambda self: self.entry.get("params") or {})

    def grid(self, phase=MEASURED) -> Grid:
        """The rows of `phase` of every rank that has some, aligned by their
        order (a rank with fewer rows, cut short, shortens every rank's)."""
        r = self.rows
        keep = r["phase"] == phase
        ranks = np.unique(r["rank"][keep])
        per = [np.flatnonzero(keep & (r["rank"] == k)) for k in ranks]
        n = min((len(p) for p in per), default=0)
        idx = np.array([p[:n] for p in per], dtype=np.int64).reshape(len(per), n)
        return Grid(
            ranks,
            *(
                r[name][idx]
                for name in ("t_start_local", "t_end_local", "t_start", "t_end", "calls", "flags", "root", "batch")
            ),
        )


def method_entries(run_dir, run) -> list[dict]:
    """The run's method descriptions (its context's `methods`, written by
    ingest into samples.parquet), each checked: a damaged one is refused
    naming the file (UsageError), never read as a wrong series."""
    entries = run.context.get("methods") or []
    where = f"the method descriptions in {Path(run_dir) / SAMPLES_FILE}"
    if not isinstance(entries, list):
        raise UsageError(
            f"{where} are damaged: a {type(entries).__name__} where a list is stored; {rebuild_hint(run_dir)}"
        )
    for k, e in enumerate(entries):
        problem = _entry_problem(e)
        if problem:
            raise UsageError(f"{where} are damaged: entry {k} {problem}; {rebuild_hint(run_dir)}")
    return entries


def _entry_problem(e) -> str | None:
    if not isinstance(e, dict):
        return f"is a {type(e).__name__}, not an object"
    for key, kind in (("method", str), ("bench", str), ("size", int), ("launch", int)):
        if key not in e and key != "launch":
            return f"lacks its '{key}'"
        value = e.get(key, 0)
        if (
            not isinstance(value, kind)
            or isinstance(value, bool)
            or (isinstance(value, int) and not 0 <= value <= MAX_SIZE)
        ):
            wanted = "a name" if kind is str else f"a count from 0 to {MAX_SIZE}"
            return f"has '{key}' = {str(value)[:40]!r}, not {wanted}"
    return None


def load_series(run_dir, run) -> list[MethodSeries]:
    """Every method series of a stored run, in run order ([] without methods)."""
    entries = method_entries(run_dir, run)
    table = read_methods(run_dir, expected=bool(entries))
    if table is None or not entries:
        return []
    cols = {name: table[name].to_numpy(zero_copy_only=False) for name in table.column_names}
    keys = np.array(
        [f"{m}\0{b}\0{s}\0{la}" for m, b, s, la in zip(cols["method"], cols["bench"], cols["size"], cols["launch"])],
        dtype=object,
    )
    order = np.lexsort((cols["rep"], cols["rank"], keys))
    keys = keys[order]
    cols = {k: v[order] for k, v in cols.items()}
    cuts = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    spans = {keys[a]: (a, b) for a, b in zip(np.r_[0, cuts], np.r_[cuts, len(keys)])} if len(keys) else {}
    out = []
    for e in entries:
        a, b = spans.get(f"{e['method']}\0{e['bench']}\0{e['size']}\0{e.get('launch', 0)}", (0, 0))
        out.append(MethodSeries(e, {k: v[a:b] for k, v in cols.items()}))
    return out
