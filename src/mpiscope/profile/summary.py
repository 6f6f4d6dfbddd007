# SPDX-License-Identifier: BSD-3-Clause
"""What a profile says, as tables: message-size distributions by count and
by bytes per call, the share of each channel, time in MPI per call and per
call site, the communication matrix, collective sizes per communicator
size, and (with --library-view) the library's messages beside the
application's. Pure functions of the stored tables; nothing prints here."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from mpiscope.common.errors import UsageError
from mpiscope.profile import files
from mpiscope.profile import checks
from mpiscope.store import checks as run_checks
from mpiscope.common.inputs import read_json, read_parquet

SMALL = 1024  # "small": under 1 KiB
LARGE = 64 * 1024  # "large": 64 KiB or more
MESSAGE_FAMILIES = ("send", "coll", "rma")  # counted once, at the sender (receives would count twice)


@dataclass
class Profile:
    context: dict
    cells: pd.DataFrame
    peers: pd.DataFrame
    sites: pd.DataFrame
    trace: pd.DataFrame | None
    library: pd.DataFrame | None
    library_colls: pd.DataFrame | None = None

    @property
    def np(self) -> int:
        return int(self.context.get("np") or 0)


_FIX = "the file is damaged: profile the application again, or restore the file from a copy"


def load(run_dir) -> Profile:
    run_dir = Path(run_dir)
    context = run_checks.context(read_json(run_dir / "context.json", hint=_FIX), run_dir / "context.json", _FIX)

    def table(name):
        path = run_dir / name
        return read_parquet(path, hint=_FIX).to_pandas() if path.exists() else None

    if context.get("status") == "completed" and not (run_dir / files.CELLS).exists():
        raise UsageError(
            f"{run_dir / files.CELLS} is missing from a completed profile run; profile the "
            "application again, or restore the file from a copy"
        )
    empty = lambda cols: pd.DataFrame(columns=cols)  # noqa: E731 - a failed run has no tables
    return Profile(
        context,
        table(files.CELLS)
        if (run_dir / files.CELLS).exists()
        else empty(["rank", "call", "family", "comm_size", "channel", "bin", "lo", "hi", "count", "bytes", "time_s"]),
        table(files.PEERS)
        if (run_dir / files.PEERS).exists()
        else empty(["rank", "peer", "direction", "bytes", "msgs"]),
        table(files.SITES)
        if (run_dir / files.SITES).exists()
        else empty(["rank", "call", "address", "module", "site", "count", "bytes", "time_s"]),
        _trace(table(files.TRACE), context, run_dir / files.TRACE),
        table(files.LIBRARY),
        table(files.LIBRARY_COLLS),
    )


def _trace(t, context, path):
    return None if t is None else checks.trace(t, context.get("np"), path, _FIX)


def messages(p: Profile, family=None) -> pd.DataFrame:
    """Cells that are messages (a peer or a communicator to go to), per family."""
    c = p.cells
    c = c[c["channel"] != "none"]
    return c[c["family"].isin(MESSAGE_FAMILIES if family is None else (family,))]


def key_numbers(p: Profile, family="send") -> dict:
    """Share of messages under 1 KiB, share of bytes in messages of 64 KiB or more, channel shares."""
    m = messages(p, family)
    count, nbytes = int(m["count"].sum()), int(m["bytes"].sum())
    small = int(m.loc[m["hi"] < SMALL, "count"].sum())
    large = int(m.loc[m["lo"] >= LARGE, "bytes"].sum())
    channels = {}
    for ch in files.CHANNELS[:3]:
        sel = m[m["channel"] == ch]
        channels[ch] = {
            "messages": int(sel["count"].sum()),
            "bytes": int(sel["bytes"].sum()),
            "message_share": float(sel["count"].sum() / count) if count else 0.0,
            "byte_share": float(sel["bytes"].sum() / nbytes) if nbytes else 0.0,
        }
    return {
        "family": family,
        "messages": count,
        "bytes": nbytes,
        "share_messages_under_1KiB": small / count if count else 0.0,
        "share_bytes_from_64KiB": large / nbytes if nbytes else 0.0,
        "channels": channels,
    }


def distribution(p: Profile, family=None) -> pd.DataFrame:
    """Per call and size bin (summed over ranks, channels, communicators):
    count, bytes and each one's share within the call."""
    m = messages(p, family)
    d = m.groupby(["call", "bin", "lo", "hi"], as_index=False)[["count", "bytes", "time_s"]].sum()
    totals = d.groupby("call")[["count", "bytes"]].transform("sum")
    d["count_share"] = d["count"] / totals["count"]
    d["byte_share"] = (d["bytes"] / totals["bytes"].replace(0, np.nan)).fillna(0.0)
    return d.sort_values(["call", "bin"]).reset_index(drop=True)


def time_per_call(p: Profile) -> pd.DataFrame:
    """Per call: calls, bytes, time in MPI summed over ranks, its share of all
    time in MPI and of the ranks' wall time (MPI_Init to MPI_Finalize)."""
    t = p.cells.groupby(["call", "family"], as_index=False)[["count", "bytes", "time_s"]].sum()
    wall = sum(r["wall_s"] for r in (p.context.get("ranks") or {}).values())
    total = t["time_s"].sum()
    t["share_of_mpi"] = t["time_s"] / total if total else 0.0
    t["share_of_wall"] = t["time_s"] / wall if wall else np.nan
    return t.sort_values("time_s", ascending=False).reset_index(drop=True)


def time_per_site(p: Profile, top=15) -> pd.DataFrame:
    s = p.sites.groupby(["call", "site", "module"], as_index=False)[["count", "bytes", "time_s"]].sum()
    return s.sort_values("time_s", ascending=False).head(top).reset_index(drop=True)


def matrix(p: Profile, what="bytes") -> np.ndarray:
    """matrix[src, dst]: user point-to-point bytes (or "msgs") src sent to dst."""
    m = np.zeros((p.np, p.np), dtype=np.int64)
    sent = p.peers[p.peers["direction"] == "sent"]
    m[sent["rank"].to_numpy(int), sent["peer"].to_numpy(int)] = sent[what].to_numpy(np.int64)
    return m


def collectives(p: Profile) -> pd.DataFrame:
    """Per collective and communicator size: calls, bytes, time, and the size
    bins it used (summed over ranks)."""
    c = p.cells[p.cells["family"] == "coll"]
    return (
        c.groupby(["call", "comm_size", "bin", "lo", "hi"], as_index=False)[["count", "bytes", "time_s"]]
        .sum()
        .sort_values(["call", "comm_size", "bin"])
        .reset_index(drop=True)
    )


def library_view(p: Profile) -> dict | None:
    """With --library-view: Open MPI's matrices by kind, and how the
    application's collectives turned into the library's messages (all of
    them, and those that crossed nodes)."""
    if p.library is None:
        return None
    node_of = p.context.get("node_of") or [0] * p.np
    lib = p.library.copy()
    lib["crosses_nodes"] = [node_of[a] != node_of[b] for a, b in zip(lib["rank"], lib["peer"])]
    kinds = lib.groupby("kind")[["bytes", "msgs"]].sum()
    crossing = lib[lib["crosses_nodes"]].groupby("kind")[["bytes", "msgs"]].sum()
    coll_calls = messages(p, "coll")
    internal = kinds.loc["internal"] if "internal" in kinds.index else pd.Series({"bytes": 0, "msgs": 0})
    calls = int(coll_calls["count"].sum())
    out = {
        "kinds": {
            k: {
                "bytes": int(v["bytes"]),
                "msgs": int(v["msgs"]),
                "bytes_crossing_nodes": int(crossing.loc[k, "bytes"]) if k in crossing.index else 0,
                "msgs_crossing_nodes": int(crossing.loc[k, "msgs"]) if k in crossing.index else 0,
            }
            for k, v in kinds.iterrows()
        },
        "collective_calls": calls,
        "library_messages_per_collective_call": float(internal["msgs"]) / calls if calls else None,
        "library_bytes_per_collective_call": float(internal["bytes"]) / calls if calls else None,
    }
    return out


def library_per_collective(p: Profile) -> pd.DataFrame | None:
    """With --library-view: per blocking collective and communicator size,
    the operations (calls summed over ranks / communicator size), the
    messages and bytes the library's algorithm sent for them (all ranks),
    per operation, and the share that crossed nodes."""
    if p.library_colls is None:
        return None
    g = p.library_colls.groupby(["call", "comm_size"], as_index=False)[
        ["calls", "msgs", "bytes", "msgs_net", "bytes_net"]
    ].sum()
    g["operations"] = g["calls"] / g["comm_size"].where(g["comm_size"] > 0)
    g["msgs_per_operation"] = g["msgs"] / g["operations"]
    g["bytes_per_operation"] = g["bytes"] / g["operations"]
    g["net_share"] = (g["msgs_net"] / g["msgs"].where(g["msgs"] > 0)).fillna(0.0)
    return g.sort_values(["call", "comm_size"]).reset_index(drop=True)


def library_matrix(p: Profile, kind="user", what="bytes") -> np.ndarray:
    m = np.zeros((p.np, p.np), dtype=np.int64)
    sel = p.library[p.library["kind"] == kind]
    np.add.at(m, (sel["rank"].to_numpy(int), sel["peer"].to_numpy(int)), sel[what].to_numpy(np.int64))
    return m
