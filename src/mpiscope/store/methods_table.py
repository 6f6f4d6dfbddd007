# SPDX-License-Identifier: BSD-3-Clause
"""The peers' methods of a run (`mpiscope run --methods`): every row of the
engine's "method" blocks (docs/reference/formats/raw-files.md), one row per
rank and timed span (a call, or a loop of calls), with its local times and
the same times on the global clock, written by ingest to `methods.parquet`
beside `samples.parquet`. The blocks' descriptions (method, benchmark,
size, how the tool times it, its parameters) go into the run's context as
`methods`. src/mpiscope/methods/ derives each tool's number from them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mpiscope.common.atomic import atomic_path
from mpiscope.common.errors import UsageError
from mpiscope.store import checks
from mpiscope.store.layout import rebuild_hint
from mpiscope.store.trace import _to_global  # the rank's clock model, as for the trace
from mpiscope.common.inputs import read_parquet

METHODS_FILE = "methods.parquet"

SCHEMA = pa.schema(
    [
        ("method", pa.string()),
        ("bench", pa.string()),
        ("size", pa.int64()),
        ("launch", pa.int32()),
        ("rank", pa.int32()),
        ("rep", pa.int32()),
        ("phase", pa.int8()),  # 0 measured, 1 warm-up, 2 calibration
        ("calls", pa.int32()),  # calls inside the span
        ("root", pa.int32()),  # the root of the call (-1: none)
        ("batch", pa.int32()),  # SKaMPI's batch, Mpptest's pass
        ("flags", pa.int8()),  # 1 started late, 2 took too long, 4 rejected
        ("t_start_local", pa.float64()),
        ("t_end_local", pa.float64()),
        ("t_sched_local", pa.float64()),
        ("t_start", pa.float64()),
        ("t_end", pa.float64()),
        ("t_sched", pa.float64()),
    ]
)
_INTS = ("rep", "phase", "calls", "root", "batch", "flags")
_TIMES = ("t_start_local", "t_end_local", "t_sched_local", "t_start", "t_end", "t_sched")
# What a method block says of itself, kept in the run's context.
_DESCRIBING = ("tool", "reference", "timing", "start", "root", "cache", "ranks", "count", "datatype", "params")


def entries(blocks) -> list[dict]:
    """One context entry per method series (method, benchmark, size, launch),
    in run order, described by its first rank with rows; `rows` counts each
    rank's rows."""
    out = {}
    for launch, rank, _, block in blocks:
        m = block.meta
        key = (m.get("method"), m.get("bench"), int(m.get("size", 0)), launch)
        entry = out.get(key)
        if entry is None or (not entry["rows"] and block.nrows):
            rows = entry["rows"] if entry else {}
            entry = out[key] = {
                "method": key[0],
                "bench": key[1],
                "size": key[2],
                "launch": launch,
                **{k: m.get(k) for k in _DESCRIBING},
                "rows": rows,
            }
        entry["rows"][str(rank)] = block.nrows
    return list(out.values())


def write_methods(run_dir, blocks) -> pa.Table | None:
    """Write `run_dir/methods.parquet` from [(launch, rank, clock model, RawBlock)]
    of method blocks; None (nothing written) when the run has none."""
    if not blocks:
        return None
    parts = []
    for launch, rank, model, block in blocks:
        n, m, cols = block.nrows, block.meta, block.columns
        if n == 0:
            continue
        part = {
            "method": np.full(n, m.get("method"), dtype=object),
            "bench": np.full(n, m.get("bench"), dtype=object),
            "size": np.full(n, int(m.get("size", 0)), dtype=np.int64),
            "launch": np.full(n, launch, dtype=np.int32),
            "rank": np.full(n, rank, dtype=np.int32),
        }
        part.update({k: np.asarray(cols[k]).astype(np.int64) for k in _INTS})
        for name in ("t_start", "t_end", "t_sched"):
            local = np.asarray(cols[name], dtype=np.float64)
            part[name + "_local"] = local
            part[name] = _to_global(local, model)
        parts.append(part)
    table = pa.Table.from_arrays(
        [pa.array(np.concatenate([p[f.name] for p in parts]) if parts else [], type=f.type) for f in SCHEMA],
        schema=SCHEMA,
    )
    with atomic_path(Path(run_dir) / METHODS_FILE) as tmp:
        pq.write_table(table, tmp, compression="lz4")
    return table


def read_methods(run_dir, expected=False) -> pa.Table | None:
    """The run's methods.parquet, or None when it measured no method
    (`expected`: its context describes method series, so the file must be
    there). A file that is not that table, or holds what the engine never
    writes, is refused naming it (UsageError): its numbers would be printed
    as results."""
    path = Path(run_dir) / METHODS_FILE
    hint = rebuild_hint(run_dir)
    table = read_parquet(path, "the methods table", hint, missing_ok=not expected)
    if table is None:
        return None
    table = checks.timer_reads(
        checks.table(table, SCHEMA, path, "the methods table", hint), _TIMES, path, "the methods table", hint
    )
    problem = _impossible(table)
    if problem:
        raise UsageError(f"the methods table {path} is damaged: {problem}; {hint}")
    return table


def _impossible(table: pa.Table) -> str | None:
    """What in the rows the engine never writes, or None. A time it did not
    take is NaN (a warm-up of no call, a rank without a clock model, a rank
    that only answers, as mpptest's partner); a measured span has at least
    one call, and either neither local time or both, finite. Its end may
    precede its start: MPIBench's one-way spans begin on the sender's clock."""
    col = {
        name: table[name].to_numpy(zero_copy_only=False)
        for name in ("size", "launch", "rank", "phase", "calls", "t_start_local", "t_end_local")
    }
    measured = col["phase"] == 0
    if (col["size"] < 0).any() or (col["launch"] < 0).any() or (col["rank"] < 0).any():
        return "a negative size, launch or rank"
    if not np.isin(col["phase"], (0, 1, 2)).all():
        return "a phase other than measured, warm-up or calibration"
    if (col["calls"] < 0).any() or (col["calls"][measured] < 1).any():
        return f"a span of {int(col['calls'][(col['calls'] < 0) | (measured & (col['calls'] < 1))][0])} calls"
    untimed = np.isnan(col["t_start_local"]) & np.isnan(col["t_end_local"])
    timed = measured & ~untimed
    if not (np.isfinite(col["t_start_local"][timed]).all() and np.isfinite(col["t_end_local"][timed]).all()):
        return "a measured span with one time and not the other, or an infinite one"
    return None


def series_rows(table: pa.Table, method: str, bench: str, size: int, launch: int) -> pa.Table:
    """The rows of one method series, in rank then repetition order."""
    mask = pc.and_(
        pc.and_(pc.equal(table["method"], method), pc.equal(table["bench"], bench)),
        pc.and_(pc.equal(table["size"], int(size)), pc.equal(table["launch"], int(launch))),
    )
    return table.filter(mask).sort_by([("rank", "ascending"), ("rep", "ascending")])
