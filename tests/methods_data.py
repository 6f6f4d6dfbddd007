# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: method series as `mpiscope run --methods` stores them
(store/methods_table.py), built from per-rank spans with known times, so
every number a tool prints can be computed by hand; and a stored run that
holds some (methods_run)."""

from __future__ import annotations

import numpy as np

from mpiscope.methods.stored import MethodSeries



def series(method, bench, size, spans, *, offsets=None, timing="call", start="barrier_after",
           root="none", cache="warm", params=None, launch=0) -> MethodSeries:
    """`spans`: {rank: [(start_local, end_local), ...] or [(start, end, phase, calls, flags, batch)]}.
    `offsets`: {rank: seconds its clock is ahead of rank 0's} (global = local - offset)."""
    cols = {k: [] for k in ("rank", "rep", "phase", "calls", "root", "batch", "flags", "t_start_local",
                            "t_end_local", "t_sched_local", "t_start", "t_end", "t_sched")}
    for rank, rows in spans.items():
        off = (offsets or {}).get(rank, 0.0)
        for i, row in enumerate(rows):
            s, e, phase, calls, flags, batch = (*row, 0, 1, 0, 0)[:6] if len(row) == 2 else row
            cols["rank"].append(rank)
            cols["rep"].append(i)
            cols["phase"].append(phase)
            cols["calls"].append(calls)
            cols["root"].append(-1)
            cols["batch"].append(batch)
            cols["flags"].append(flags)
            cols["t_start_local"].append(s)
            cols["t_end_local"].append(e)
            cols["t_sched_local"].append(np.nan)
            cols["t_start"].append(s - off)
            cols["t_end"].append(e - off)
            cols["t_sched"].append(np.nan)
    rows = {k: np.asarray(v) for k, v in cols.items()}
    entry = {"method": method, "bench": bench, "size": size, "launch": launch, "timing": timing, "start": start,
             "root": root, "cache": cache, "ranks": "all", "params": params or {}, "tool": method}
    return MethodSeries(entry, rows)


def per_call(durations_by_rank, gap=1.0, t0=10.0, phase=0):
    """Spans of back-to-back-free calls: call i of every rank starts at
    t0 + i * gap (local) and lasts the given duration."""
    return {r: [(t0 + i * gap, t0 + i * gap + d, phase, 1, 0, 0) for i, d in enumerate(ds)]
            for r, ds in durations_by_rank.items()}


COLUMNS = [["rep", "i32"], ["phase", "u8"], ["calls", "i32"], ["root", "i32"], ["batch", "i32"],
           ["flags", "u8"], ["t_start", "f64"], ["t_end", "f64"], ["t_sched", "f64"]]
_TYPES = {"i32": "<i4", "u8": "u1", "f64": "<f8"}


def encode_method_block(meta: dict, rows) -> bytes:
    """A raw "method" block (docs/reference/formats/raw-files.md) of `rows`:
    [(t_start, t_end, phase, calls, flags, batch)] in local seconds."""
    import json
    import struct

    meta = {**meta, "columns": COLUMNS}
    js = json.dumps(meta).encode()
    n = len(rows)
    cols = {"rep": list(range(n)), "phase": [r[2] for r in rows], "calls": [r[3] for r in rows],
            "root": [-1] * n, "batch": [r[5] for r in rows], "flags": [r[4] for r in rows],
            "t_start": [r[0] for r in rows], "t_end": [r[1] for r in rows], "t_sched": [np.nan] * n}
    payload = b"".join(np.asarray(cols[name], dtype=_TYPES[kind]).tobytes() for name, kind in COLUMNS)
    return b"BLOCK___" + struct.pack("<I", len(js)) + js + struct.pack("<Q", n) + payload + b"ENDBLOCK"


def method_meta(method, bench, size, rank, role="member", timing="call", start="barrier_after", **kw):
    return {"kind": "method", "method": method, "tool": method, "reference": method.startswith("ref_"),
            "bench": bench, "size": size, "launch": 0, "rank": rank, "role": role, "timing": timing,
            "start": start, "root": kw.get("root", "none"), "cache": kw.get("cache", "warm"),
            "ranks": kw.get("ranks", "all"), "count": size, "datatype": "MPI_BYTE",
            "params": kw.get("params", {})}


U = 1e-6
OFFSET = 3e-3  # rank 1's clock is ahead of rank 0's by 3 ms


def methods_run(run_dir, with_methods=True, schema=3, run_id="20240101-000000-abcd"):
    """A stored 2-rank run of allreduce at 8 bytes (mpiscope's median: 3 µs)
    and, `with_methods`, OSU's method and the barrier reference beside it:
    rank 0 takes 1, 2, 3 µs, rank 1 3, 3, 6 µs (its local clock ahead by OFFSET)."""
    import json

    from mpiscope.store.ingest import ingest
    from rawgen import Clock, RunBuilder, SeriesSpec, context_for

    rb = RunBuilder(run_dir, nranks=2, clocks={1: Clock(OFFSET)}, schema=schema)
    rb.add(SeriesSpec("allreduce", 8, [2 * U, 3 * U, 4 * U]))
    rb.write()
    if with_methods:
        spans = {0: [(1.0, 2.0), (11.5, 13.5), (20, 23)], 1: [(0.5, 3.5), (11, 14), (20, 26)]}
        warm = (0.0, 0.4, 1, 1, 0, 0)
        for rank, rows in spans.items():
            shift = OFFSET if rank else 0
            local = [warm] + [(s * U + shift, e * U + shift, 0, 1, 0, 0) for s, e in rows]
            ref = [(0.0, 2.5 * U + shift, 0, 1, 0, 0)]
            path = rb.run_dir / "raw" / "launch-0" / f"rank-{rank}.raw"
            with open(path, "ab") as f:
                f.write(encode_method_block(method_meta("osu", "allreduce", 8, rank, params={"skip": 1}), local))
                f.write(encode_method_block(method_meta("ref_barrier", "allreduce", 8, rank,
                                                        start="barrier_before"), ref))
    ctx = context_for(run_id=run_id)
    (rb.run_dir / "context.json").write_text(json.dumps(ctx))
    ingest(rb.run_dir, ctx)
    return rb.run_dir
