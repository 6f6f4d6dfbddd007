# SPDX-License-Identifier: BSD-3-Clause
"""The report of profile runs (mpiscope profile): per run its key numbers,
the size distributions by count and by bytes, channel shares, time in MPI
per call and per call site, the communication matrix as a heat map, and
collectives per communicator size; the library's view when recorded."""

from __future__ import annotations

import datetime

from mpiscope.common.sizes import format_size
from mpiscope.profile import summary as S
from mpiscope.report.pool import draw, resolved


def _bin_label(b: int) -> str:
    return "0" if b == 0 else f"{format_size(1 << (b - 1))}"


def _records(df):
    return [r._asdict() for r in df.itertuples(index=False)]


def profile_view(run_dir) -> dict:
    p = S.load(run_dir)
    view = {
        "id": p.context["run_id"],
        "status": p.context.get("status"),
        "error": p.context.get("error"),
        "command": " ".join(p.context["launch_commands"][0]),
        "np": p.np,
        "nodes": p.context.get("nodes"),
        "library": (p.context.get("mpi_library") or "").split("\n")[0],
        "overhead": p.context.get("overhead") or {},
        "missing": p.context.get("missing_ranks") or [],
    }
    if p.cells.empty:
        return view
    view["p2p"], view["coll"] = S.key_numbers(p, "send"), S.key_numbers(p, "coll")
    view["calls"] = _records(S.time_per_call(p))
    view["sites"] = _records(S.time_per_site(p, 20))
    co = S.collectives(p)
    view["collectives"] = _records(
        co.groupby(["call", "comm_size"], as_index=False).agg(
            calls=("count", "sum"), bytes=("bytes", "sum"), time_s=("time_s", "sum"), lo=("lo", "min"), hi=("hi", "max")
        )
    )
    bins = {}
    for family in ("send", "coll"):
        d = S.distribution(p, family)
        for call, g in d.groupby("call"):
            bins[call] = {
                "count": {int(b): int(n) for b, n in zip(g["bin"], g["count"])},
                "bytes": {int(b): int(n) for b, n in zip(g["bin"], g["bytes"])},
            }
    labels = {b: _bin_label(b) for g in bins.values() for b in g["count"]}
    view["sizes_svg"] = draw("size_histogram", bins, labels) if bins else None
    view["matrix_svg"] = draw("comm_matrix", S.matrix(p).tolist()) if p.np else None
    view["library_view"] = S.library_view(p)
    per = S.library_per_collective(p)
    view["library_per_collective"] = (
        None if per is None else [{**r, "name": r["call"].removeprefix("MPI_").lower()} for r in _records(per)]
    )
    return view


def gather(run_dirs) -> dict:
    return resolved(
        {
            "generated": datetime.datetime.now().isoformat(timespec="seconds"),
            "profiles": [profile_view(d) for d in run_dirs],
        }
    )
