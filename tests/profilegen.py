# SPDX-License-Identifier: BSD-3-Clause
"""Synthetic profile runs in the profiler's own raw format (native/pmpi/writer.c:
RUN/profile/rank-<r>.json, and rank-<r>.trace with a trace), turned into a
run directory by the real ingest (profile/ingest.py), so that tests of what
reads a profile run read what a real one holds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from mpiscope.profile import files
from mpiscope.profile.ingest import TRACE_DTYPE, ingest

CALLS = [("MPI_Send", "send"), ("MPI_Isend", "send"), ("MPI_Sendrecv", "send"), ("MPI_Recv", "recv"),
         ("MPI_Irecv", "recv"), ("MPI_Wait", "sync"), ("MPI_Waitall", "sync"), ("MPI_Barrier", "coll"),
         ("MPI_Bcast", "coll"), ("MPI_Reduce", "coll"), ("MPI_Allreduce", "coll"), ("MPI_Allgather", "coll"),
         ("MPI_Alltoall", "coll"), ("MPI_Iallreduce", "coll"), ("MPI_Sendrecv_received", "recv")]
NAMES = [c[0] for c in CALLS]
CHANNELS = list(files.CHANNELS)
TICK = 1e-9


def _rank_doc(r, world, wall_s, cells, trace):
    sizes = sorted({c[1] for c in cells} | {e[5] for e in trace or []})
    doc = {"format": "mpiscope-profile", "version": 1, "rank": r, "world_size": world, "host": "h0", "pid": 100 + r,
           "node": 0, "nodes": 1, "node_of": [0] * world, "library": "synthetic", "thread_level": 0,
           "wall_s": wall_s, "tick_s": TICK, "overhead": {"wrapped_ns": 20.0, "direct_ns": 10.0},
           "calls": [list(c) for c in CALLS], "channels": CHANNELS, "comm_sizes": sizes, "nbins": 64,
           "cells": [[NAMES.index(call), sizes.index(q), CHANNELS.index(ch), b, n, nbytes, round(t / TICK)]
                     for call, q, ch, b, n, nbytes, t in cells],
           "peers": {k: [0] * world for k in ("sent_bytes", "sent_msgs", "recv_bytes", "recv_msgs")},
           "sites": [], "lost": {"sites": 0, "requests": 0, "communicators": 0}, "modules": [],
           "library_colls": None, "trace": None}
    return doc


def write_profile(run_dir, world: int, wall_s: float, cells: dict, trace: dict | None = None,
                  comms: dict | None = None, run_id: str = "synthetic") -> Path:
    """A completed profile run in `run_dir`. cells: {rank: [(call, comm size,
    channel, bin, calls, bytes, seconds)]}; trace: {rank: [(call, t0 s, t1 s,
    bytes, peer, comm size, comm index)]} with comms {rank: [members of each
    comm index]} (world ranks)."""
    run_dir = Path(run_dir)
    raw = run_dir / files.RAW_DIR
    raw.mkdir(parents=True)
    for r in range(world):
        doc = _rank_doc(r, world, wall_s, cells.get(r, []), (trace or {}).get(r))
        if trace is not None:
            ev = np.zeros(len(trace[r]), dtype=TRACE_DTYPE)
            for i, (call, t0, t1, nbytes, peer, q, comm) in enumerate(trace[r]):
                ev[i] = (round(t0 / TICK), round(t1 / TICK), nbytes, NAMES.index(call), peer, q, comm)
            ev.tofile(raw / f"rank-{r}.trace")
            doc["trace"] = {"tsc_period_s": TICK, "events": len(ev), "dropped": 0, "comms": (comms or {}).get(r, []),
                            "clock": {"offset_s": 0.0, "drift": 0.0, "ref_s": 0.0, "residual_s": 0.0}}
            doc["trace_file"] = f"rank-{r}.trace"
        (raw / f"rank-{r}.json").write_text(json.dumps(doc))
    context = {"kind": files.KIND, "run_id": run_id, "status": "completed", "launch_commands": [["app"]]}
    context.update(ingest(run_dir))
    (run_dir / "context.json").write_text(json.dumps(context))
    return run_dir
