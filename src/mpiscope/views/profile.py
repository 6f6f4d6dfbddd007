# SPDX-License-Identifier: BSD-3-Clause
"""A profile run as text (`mpiscope show`, `mpiscope profile`) and as the
"profile" JSON document: the key numbers, time in MPI per call and per call
site, the size distribution per call by count and by bytes, the channels,
collectives per communicator size, the peer matrix."""

from __future__ import annotations


from mpiscope.common.sizes import format_size
from mpiscope.profile import summary as S
from mpiscope.views.text import sig, table

MATRIX_MAX = 16  # ranks shown as a text matrix; the report draws any size


def _pct(x) -> str:
    return "-" if x is None or x != x else f"{100 * x:.1f}%"


def _count(x) -> str:
    """A count that is an average: whole when it is whole."""
    return str(int(x)) if float(x).is_integer() else sig(x)


def _bytes(n) -> str:
    n = float(n)
    for unit, f in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= f:
            return f"{n / f:.1f} {unit}"
    return f"{int(n)} B"


def _range(lo, hi) -> str:
    return "0" if hi == 0 else f"{format_size(int(lo))}-{format_size(int(hi) + 1)}"


def format_profile(p: S.Profile) -> str:
    c = p.context
    out = [
        f"profile {c['run_id']} ({c.get('status')}): {' '.join(c['launch_commands'][0])}",
        f"{p.np} ranks on {c.get('nodes')} node(s); "
        f"{c['mpi_library'].splitlines()[0] if c.get('mpi_library') else c.get('mpi')}",
    ]
    o = c.get("overhead") or {}
    if o:
        out.append(
            f"profiler cost: {sig(o.get('per_call_ns_median'), 3)} ns per call (median rank; "
            f"max {sig(o.get('per_call_ns_max'), 3)}), {o.get('calls')} calls, at most "
            f"{_pct(o.get('share_of_wall_max'))} of a rank's time"
        )
    if c.get("error"):
        out.append(f"error: {c['error']}")
    if p.cells.empty:
        return "\n".join(out) + "\n"
    for family, title in (("send", "point-to-point"), ("coll", "collectives")):
        k = S.key_numbers(p, family)
        if not k["messages"]:
            continue
        ch = k["channels"]
        unit = "messages" if family == "send" else "calls"
        out += [
            "",
            f"{title}: {k['messages']} {unit}, {_bytes(k['bytes'])}; "
            f"{_pct(k['share_messages_under_1KiB'])} of {unit} under 1 KiB, "
            f"{_pct(k['share_bytes_from_64KiB'])} of bytes in {unit} of 64 KiB or more",
            "  channels (messages / bytes): "
            + ", ".join(f"{name} {_pct(v['message_share'])} / {_pct(v['byte_share'])}" for name, v in ch.items()),
        ]
    t = S.time_per_call(p)
    out += [
        "",
        "time in MPI per call (all ranks):",
        table(
            ["call", "calls", "bytes", "time s", "% of MPI", "% of wall"],
            [
                [
                    r.call,
                    str(int(r["count"])),
                    _bytes(r.bytes),
                    sig(r.time_s),
                    _pct(r.share_of_mpi),
                    _pct(r.share_of_wall),
                ]
                for _, r in t.iterrows()
            ],
            [False, True, True, True, True, True],
        ),
    ]
    d = S.distribution(p)
    out += [
        "",
        "message sizes per call (count share / byte share):",
        table(
            ["call", "size", "count", "% count", "% bytes"],
            [
                [r.call, _range(r.lo, r.hi), str(int(r["count"])), _pct(r.count_share), _pct(r.byte_share)]
                for _, r in d.iterrows()
            ],
            [False, True, True, True, True],
        ),
    ]
    co = S.collectives(p)
    if not co.empty:
        g = co.groupby(["call", "comm_size"], as_index=False).agg(
            calls=("count", "sum"), bytes=("bytes", "sum"), time_s=("time_s", "sum"), lo=("lo", "min"), hi=("hi", "max")
        )
        out += [
            "",
            "collectives per communicator size:",
            table(
                ["call", "comm size", "calls", "sizes", "bytes", "time s"],
                [
                    [
                        r.call,
                        str(r.comm_size) if r.comm_size >= 0 else "other",
                        str(int(r.calls)),
                        _range(r.lo, r.hi),
                        _bytes(r.bytes),
                        sig(r.time_s),
                    ]
                    for _, r in g.iterrows()
                ],
                [False, True, True, True, True, True],
            ),
        ]
    s = S.time_per_site(p, 10)
    if not s.empty:
        out += [
            "",
            "call sites by time in MPI (top 10):",
            table(
                ["call", "site", "calls", "time s"],
                [[r.call, r.site, str(int(r["count"])), sig(r.time_s)] for _, r in s.iterrows()],
                [False, False, True, True],
            ),
        ]
    if 0 < p.np <= MATRIX_MAX:
        m = S.matrix(p)
        out += [
            "",
            "point-to-point bytes sent (row: from, column: to):",
            table(
                ["from\\to"] + [str(j) for j in range(p.np)],
                [[str(i)] + [_bytes(v) if v else "." for v in m[i]] for i in range(p.np)],
                [True] * (p.np + 1),
            ),
        ]
    lv = S.library_view(p)
    if lv:
        out += [
            "",
            f"the library's view (Open MPI monitoring): {lv['collective_calls']} collective calls became "
            f"{lv['kinds'].get('internal', {}).get('msgs', 0)} messages "
            f"({_bytes(lv['kinds'].get('internal', {}).get('bytes', 0))}), "
            f"{lv['kinds'].get('internal', {}).get('msgs_crossing_nodes', 0)} of them across nodes",
        ]
        for kind, v in lv["kinds"].items():
            out.append(
                f"  {kind}: {v['msgs']} messages, {_bytes(v['bytes'])}, across nodes "
                f"{v['msgs_crossing_nodes']} messages, {_bytes(v['bytes_crossing_nodes'])}"
            )
    per = S.library_per_collective(p)
    if per is not None and not per.empty:
        out += ["", "per blocking collective, what the library's algorithm sent (all ranks):"]
        out += [
            f"  {r.call.removeprefix('MPI_').lower()} on {r.comm_size} ranks: {_count(r.operations)} "
            f"{'call' if r.operations == 1 else 'calls'} → "
            f"{r.msgs} library messages ({_count(r.msgs_per_operation)} per call), {_bytes(r.bytes)}, "
            f"{100 * r.net_share:.0f}% crossed nodes"
            for r in per.itertuples()
        ]
        rest = lv["kinds"].get("internal", {}).get("msgs", 0) - int(per["msgs"].sum())
        out.append(
            f"  other internal messages: {rest} (non-blocking collectives, sent from progress; the "
            "profiler's own collectives at MPI_Init and MPI_Finalize)"
        )
    return "\n".join(out) + "\n"


def profile_doc(p: S.Profile) -> dict:
    """The "profile" JSON document."""
    c = p.context
    t = S.time_per_call(p)
    doc = {
        "run_id": c["run_id"],
        "kind": "profile",
        "status": c.get("status"),
        "error": c.get("error"),
        "warning": c.get("warning"),
        "command": c["launch_commands"][0],
        "np": p.np,
        "nodes": c.get("nodes"),
        "node_of": c.get("node_of"),
        "missing_ranks": c.get("missing_ranks") or [],
        "overhead": c.get("overhead") or {},
        "point_to_point": S.key_numbers(p, "send"),
        "collectives": S.key_numbers(p, "coll"),
        "calls": [
            {
                "call": r.call,
                "family": r.family,
                "calls": int(r["count"]),
                "bytes": int(r.bytes),
                "time_s": float(r.time_s),
            }
            for _, r in t.iterrows()
        ],
        "sizes": [
            {"call": r.call, "lo": int(r.lo), "hi": int(r.hi), "count": int(r["count"]), "bytes": int(r.bytes)}
            for _, r in S.distribution(p).iterrows()
        ],
        "matrix_bytes": S.matrix(p).tolist() if p.np else [],
        "library_view": S.library_view(p),
        "library_per_collective": _library_rows(p),
    }
    return doc


def _library_rows(p: S.Profile):
    per = S.library_per_collective(p)
    if per is None:
        return None
    return [
        {
            "call": r.call,
            "comm_size": int(r.comm_size),
            "operations": float(r.operations),
            "messages": int(r.msgs),
            "bytes": int(r.bytes),
            "messages_per_operation": float(r.msgs_per_operation),
            "bytes_per_operation": float(r.bytes_per_operation),
            "messages_crossing_nodes": int(r.msgs_net),
            "bytes_crossing_nodes": int(r.bytes_net),
            "share_crossing_nodes": float(r.net_share),
        }
        for r in per.itertuples()
    ]
