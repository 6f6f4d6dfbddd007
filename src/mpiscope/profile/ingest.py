# SPDX-License-Identifier: BSD-3-Clause
"""The per-rank files of a profile run → Parquet tables in the run directory
(files.py names them) and what the run's context records about the ranks.

A rank that did not reach MPI_Finalize wrote no file: it is listed as
missing, and every other rank's profile is kept whole."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from mpiscope.profile import files, monitoring
from mpiscope.profile.symbols import symbolize
from mpiscope.store.layout import SCHEMA_VERSION
from mpiscope.common.inputs import read_json

TRACE_DTYPE = np.dtype(
    [
        ("t0", "<u8"),
        ("t1", "<u8"),
        ("bytes", "<u8"),
        ("call", "<i4"),
        ("peer", "<i4"),
        ("comm_size", "<i4"),
        ("comm", "<i4"),
    ]
)


def bin_range(b: int):
    """Bytes [lo, hi] of size bin b (bin 0: empty messages)."""
    return (0, 0) if b == 0 else (1 << (b - 1), (1 << b) - 1)


def _write(df: pd.DataFrame, path: Path):
    table = pa.Table.from_pandas(df, preserve_index=False)
    table = table.replace_schema_metadata({b"mpiscope.schema_version": str(SCHEMA_VERSION).encode()})
    pq.write_table(table, path)


def read_ranks(raw: Path) -> dict:
    """{rank: its parsed JSON file} of every complete rank file."""
    ranks = {}
    for path in sorted(raw.glob("rank-*.json")):
        data = read_json(path, what="the rank profile", hint="profile the application again")
        if not isinstance(data, dict) or data.get("format") != "mpiscope-profile":
            continue
        ranks[int(data["rank"])] = data
    return ranks


def _cells(ranks):
    rows = []
    for r, d in ranks.items():
        names, sizes, tick = d["calls"], d["comm_sizes"], d["tick_s"]
        for call, slot, ch, b, count, nbytes, ticks in d["cells"]:
            lo, hi = bin_range(b)
            rows.append(
                (
                    r,
                    names[call][0],
                    names[call][1],
                    sizes[slot] if slot < len(sizes) else -1,
                    d["channels"][ch],
                    b,
                    lo,
                    hi,
                    count,
                    nbytes,
                    ticks * tick,
                )
            )
    return pd.DataFrame(
        rows, columns=["rank", "call", "family", "comm_size", "channel", "bin", "lo", "hi", "count", "bytes", "time_s"]
    )


def _peers(ranks):
    rows = []
    for r, d in ranks.items():
        p = d["peers"]
        for direction, b, m in (("sent", "sent_bytes", "sent_msgs"), ("recv", "recv_bytes", "recv_msgs")):
            for peer, (nbytes, msgs) in enumerate(zip(p[b], p[m])):
                if msgs:
                    rows.append((r, peer, direction, nbytes, msgs))
    return pd.DataFrame(rows, columns=["rank", "peer", "direction", "bytes", "msgs"])


def _sites(ranks):
    rows = []
    for r, d in ranks.items():
        modules = [(int(lo, 16), int(hi, 16), int(off, 16), perms, path) for lo, hi, off, perms, path in d["modules"]]
        addresses = [int(a, 16) for _, a, *_ in d["sites"]]
        names = symbolize(addresses, modules)
        for (call, address, count, nbytes, ticks), a in zip(d["sites"], addresses):
            module, symbol = names[a]
            rows.append((r, d["calls"][call][0], address, module, symbol, count, nbytes, ticks * d["tick_s"]))
    return pd.DataFrame(rows, columns=["rank", "call", "address", "module", "site", "count", "bytes", "time_s"])


def _library_colls(ranks):
    """With --library-view (Open MPI): per rank, blocking collective and
    communicator size, its calls and the messages and bytes the library sent
    for them from this rank, by the channel to their destination."""
    rows = []
    for r, d in ranks.items():
        for call, slot, calls, *per_channel in d.get("library_colls") or []:
            n = len(d["channels"])
            msgs, nbytes = dict(zip(d["channels"], per_channel[:n])), dict(zip(d["channels"], per_channel[n:]))
            rows.append(
                (
                    r,
                    d["calls"][call][0],
                    d["comm_sizes"][slot] if slot < len(d["comm_sizes"]) else -1,
                    calls,
                    sum(msgs.values()),
                    sum(nbytes.values()),
                    msgs["self"],
                    msgs["node"],
                    msgs["net"],
                    nbytes["net"],
                )
            )
    return pd.DataFrame(
        rows,
        columns=[
            "rank",
            "call",
            "comm_size",
            "calls",
            "msgs",
            "bytes",
            "msgs_self",
            "msgs_node",
            "msgs_net",
            "bytes_net",
        ],
    )


def _trace(raw, ranks):
    """Every traced call on rank 0's clock: local = ticks × period, global by
    the rank's clock model; its communicator as an index into the run's
    communicator table (one row per distinct member list, in world ranks).
    Returns (events, communicators) or (None, None)."""
    frames, members = [], {}
    for r, d in ranks.items():
        t = d.get("trace")
        if not t:
            continue
        ev = np.fromfile(raw / d["trace_file"], dtype=TRACE_DTYPE)
        period, m = t["tsc_period_s"], t["clock"]
        local0, local1 = ev["t0"] * period, ev["t1"] * period
        to_global = lambda x: x - (m["offset_s"] + m["drift"] * (x - m["ref_s"]))  # noqa: E731
        names = [c[0] for c in d["calls"]]
        local = np.array(
            [members.setdefault(tuple(m), len(members)) for m in t.get("comms", [])] + [-1], dtype=np.int32
        )  # the rank's own indices → the run's; -1 stays unknown
        frames.append(
            pd.DataFrame(
                {
                    "rank": r,
                    "call": pd.Categorical.from_codes(ev["call"], names),
                    "peer": ev["peer"],
                    "comm_size": ev["comm_size"],
                    "comm": local[np.where(ev["comm"] >= 0, ev["comm"], -1)],
                    "bytes": ev["bytes"],
                    "t_start_local": local0,
                    "t_end_local": local1,
                    "t_start": to_global(local0),
                    "t_end": to_global(local1),
                }
            )
        )
    if not frames:
        return None, None
    df = pd.concat(frames, ignore_index=True)
    df["call"] = df["call"].astype(str)
    comms = pd.DataFrame({"comm": np.arange(len(members), dtype=np.int32), "members": [list(m) for m in members]})
    return df.sort_values(["t_start", "rank"], kind="stable").reset_index(drop=True), comms


def rank_context(ranks: dict, world_size: int) -> dict:
    """What the run's context records: per rank its host, node, wall time and
    the profiler's own measured cost; which ranks wrote nothing; trace
    clock residuals and losses."""
    per_rank, missing = {}, [r for r in range(world_size) if r not in ranks]
    for r, d in sorted(ranks.items()):
        calls = sum(c[4] for c in d["cells"])
        o = d["overhead"]
        per_call_ns = max(o["wrapped_ns"] - o["direct_ns"], 0.0)
        per_rank[str(r)] = {
            "host": d["host"],
            "node": d["node"],
            "pid": d["pid"],
            "wall_s": d["wall_s"],
            "calls": calls,
            "lost": d["lost"],
            "overhead": {
                "wrapped_ns": o["wrapped_ns"],
                "direct_ns": o["direct_ns"],
                "per_call_ns": per_call_ns,
                "estimated_s": per_call_ns * 1e-9 * calls,
                "share_of_wall": (per_call_ns * 1e-9 * calls / d["wall_s"]) if d["wall_s"] else None,
            },
        }
        if d.get("trace"):
            t = d["trace"]
            per_rank[str(r)]["trace"] = {
                "events": t["events"],
                "dropped": t["dropped"],
                "clock_residual_s": t["clock"]["residual_s"],
            }
    first = next(iter(ranks.values()), {})
    return {
        "ranks": per_rank,
        "missing_ranks": missing,
        "nodes": first.get("nodes"),
        "node_of": first.get("node_of"),
        "mpi_library": first.get("library"),
    }


def ingest(run_dir: Path) -> dict:
    """Reads RUN/profile/ (and RUN/library-view/), writes the tables, returns
    the context's additions. Raises ValueError when no rank wrote a profile."""
    run_dir = Path(run_dir)
    raw = run_dir / files.RAW_DIR
    ranks = read_ranks(raw)
    if not ranks:
        raise ValueError(
            "no rank wrote a profile: the application did not reach MPI_Finalize under "
            "the profiler, or it is not an MPI program of this MPI"
        )
    world = next(iter(ranks.values()))["world_size"]
    _write(_cells(ranks), run_dir / files.CELLS)
    _write(_peers(ranks), run_dir / files.PEERS)
    _write(_sites(ranks), run_dir / files.SITES)
    trace, comms = _trace(raw, ranks)
    if trace is not None:
        _write(trace, run_dir / files.TRACE)
        _write(comms, run_dir / files.COMMS)
    mon = run_dir / files.MONITORING_DIR
    if mon.is_dir():
        rows = monitoring.read(mon)
        _write(pd.DataFrame(rows, columns=["rank", "peer", "kind", "bytes", "msgs"]), run_dir / files.LIBRARY)
    if any(d.get("library_colls") is not None for d in ranks.values()):
        _write(_library_colls(ranks), run_dir / files.LIBRARY_COLLS)
    context = rank_context(ranks, world)
    context["np"] = world
    context["hosts"] = sorted({d["host"] for d in ranks.values()})
    return context
