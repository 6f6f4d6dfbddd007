# SPDX-License-Identifier: BSD-3-Clause
"""Weights for tuning (`mpiscope profile weights RUN`): per collective and
communicator size, how the application's calls spread over message sizes
and how much time they took, so a tuner can weigh each (collective, size,
communicator size) cell by what the application really does. Versioned:
docs/schemas/profile-weights.schema.json describes the document."""

from __future__ import annotations

from mpiscope.profile import summary as S

WEIGHTS_VERSION = 1


def collective_name(call: str) -> tuple[str, bool]:
    """MPI_Iallreduce -> ("allreduce", False); MPI_Barrier -> ("barrier", True)."""
    name = call.removeprefix("MPI_").lower()
    blocking = not (name.startswith("i") and name[1:] in _BLOCKING)
    return (name if blocking else name[1:]), blocking


_BLOCKING = {
    "barrier",
    "bcast",
    "reduce",
    "allreduce",
    "gather",
    "scatter",
    "allgather",
    "alltoall",
    "reduce_scatter_block",
    "gatherv",
    "scatterv",
    "allgatherv",
    "alltoallv",
    "reduce_scatter",
    "scan",
    "exscan",
}


def weights(p: S.Profile) -> dict:
    co = S.collectives(p)
    total_time = float(co["time_s"].sum()) or 0.0
    entries = {}
    for _, r in co.iterrows():
        name, blocking = collective_name(r.call)
        key = (name, int(r.comm_size), blocking)
        e = entries.setdefault(
            key,
            {
                "collective": name,
                "comm_size": int(r.comm_size),
                "blocking": blocking,
                "calls": 0,
                "bytes": 0,
                "time_s": 0.0,
                "sizes": [],
            },
        )
        e["calls"] += int(r["count"])
        e["bytes"] += int(r.bytes)
        e["time_s"] += float(r.time_s)
        e["sizes"].append(
            {
                "lo": int(r.lo),
                "hi": int(r.hi),
                "calls": int(r["count"]),
                "bytes": int(r.bytes),
                "time_s": float(r.time_s),
            }
        )
    for e in entries.values():
        e["time_share"] = e["time_s"] / total_time if total_time else 0.0
        for s in e["sizes"]:
            s["call_share"] = s["calls"] / e["calls"] if e["calls"] else 0.0
            s["time_share"] = s["time_s"] / e["time_s"] if e["time_s"] else 0.0
    return {
        "format": "mpiscope-profile-weights",
        "version": WEIGHTS_VERSION,
        "run_id": p.context["run_id"],
        "command": p.context["launch_commands"][0],
        "np": p.np,
        "nodes": p.context.get("nodes"),
        "size_meaning": (
            "bytes of the buffer for bcast, reduce, allreduce, scan, exscan; one rank's block "
            "for gather, scatter, allgather, alltoall, reduce_scatter_block; the whole vector "
            "for the v-variants and reduce_scatter"
        ),
        "collectives": sorted(entries.values(), key=lambda e: (e["collective"], e["comm_size"], not e["blocking"])),
    }
