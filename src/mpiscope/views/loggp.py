# SPDX-License-Identifier: BSD-3-Clause
"""Text and JSON forms of a LogGPResult (loggp.py): times in microseconds,
G in nanoseconds per byte, bandwidth in MB/s, g/G in bytes."""

from __future__ import annotations

from mpiscope.models.loggp import LogGPResult
from mpiscope.stats.quality import MIN_SAMPLES
from mpiscope.common.sizes import format_size
from mpiscope.common.documents import json_document
from mpiscope.views.text import interval, sig, table
from mpiscope.views.show import describe

# name, label, factor, unit
_PARAM_ROWS = (
    ("EEL", "EEL", 1e6, "us"),
    ("o_s", "o_s", 1e6, "us"),
    ("o_r", "o_r", 1e6, "us"),
    ("g", "g", 1e6, "us"),
    ("G", "G", 1e9, "ns/B"),
    ("bandwidth", "1/G", 1e-6, "MB/s"),
    ("L", "L", 1e6, "us"),
    ("g_over_G", "g/G", 1.0, "B"),
    ("overlap", "EEL-(o_s+o_r)", 1e6, "us"),
)


def _est(e, factor):
    if e is None:
        return "-", "-"
    return sig(e.point * factor), interval(e.low * factor, e.high * factor)


def _us(e):
    return "-" if e is None else sig(e.point * 1e6)


def format_loggp(r: LogGPResult) -> str:
    ci = f"ci{round(r.level * 100):d}"
    out = [
        describe(r.run),
        f"LogGP parameters at {r.base_size} B (the method of Bell et al. 2003); {round(r.level * 100)}% "
        f"CIs: bootstrap within each series ({r.n_boot} resamples, seed {r.seed})",
    ]
    rows = []
    for name, label, factor, unit in _PARAM_ROWS:
        value, ivl = _est(r.params.get(name), factor)
        n = r.samples.get(name)
        rows.append([label, value, unit, ivl, "-" if n is None else str(n), r.sources.get(name, "")])
    out += [
        "  " + line
        for line in table(
            ["param", "value", "unit", ci, "n", "from"], rows, [False, True, False, False, True, False]
        ).splitlines()
    ]
    out.append(
        f"  n: the fewest valid samples of a series the value comes from (at least {MIN_SAMPLES} for a median's 95% CI)"
    )
    for f in r.flags:
        out.append(f"  FLAG: {f}")
    for n in r.notes:
        out.append(f"  note: {n}")

    sizes = sorted(set(r.eel) | {o.size for rows_ in r.overheads.values() for o in rows_})
    if any(r.overheads.values()):
        send = {o.size: o for o in r.overheads["send"]}
        recv = {o.size: o for o in r.overheads["receive"]}
        out += [
            "",
            "overheads on top of EEL (us): o from the steps past the knee; knee: the bounds "
            "Bell et al.'s reading of the knee gives",
        ]
        rows = []
        for size in sizes:
            s, rv, e = send.get(size), recv.get(size), r.eel.get(size)
            total = (s.value.point + rv.value.point) if s and rv and s.value and rv.value else None
            rows.append(
                [
                    format_size(size),
                    _us(e),
                    _us(s.value if s else None),
                    _est(s.value if s else None, 1e6)[1],
                    _knee(s),
                    _us(rv.value if rv else None),
                    _est(rv.value if rv else None, 1e6)[1],
                    _knee(rv),
                    "-" if total is None else sig(total * 1e6),
                    "-" if total is None or e is None else sig((e.point - total) * 1e6),
                ]
            )
        out += [
            "  " + line
            for line in table(
                [
                    "size(B)",
                    "EEL",
                    "o_s",
                    f"o_s {ci}",
                    "o_s knee",
                    "o_r",
                    f"o_r {ci}",
                    "o_r knee",
                    "o_s+o_r",
                    "EEL-(o_s+o_r)",
                ],
                rows,
                [False] + [True] * 9,
            ).splitlines()
        ]
        for o in r.overheads["send"] + r.overheads["receive"]:
            if o.note:
                out.append(f"  note ({o.side}, {format_size(o.size)} B): {o.note}")

    if r.gaps:
        qs = sorted({q for v in r.gaps.values() for q in v})
        out += ["", "gap g(m, q): time per message of the flood (us), * the least per size"]
        rows = []
        for size in sorted(r.gaps):
            cells = []
            for q in qs:
                e = r.gaps[size].get(q)
                cells.append("-" if e is None else sig(e.point * 1e6) + ("*" if r.best_q.get(size) == q else ""))
            rows.append([format_size(size)] + cells)
        out += [
            "  " + line
            for line in table(["size(B)"] + [f"q{q}" for q in qs], rows, [False] + [True] * len(qs)).splitlines()
        ]

    if r.one_sided:
        out += ["", "one-sided beside two-sided (us; G in ns/B)"]
        rows = [
            [
                "two-sided",
                "send/recv",
                _us(r.params.get("EEL")),
                _us(r.params.get("g")),
                sig(r.params["G"].point * 1e9) if r.params.get("G") else "-",
            ]
        ]
        for mode, v in r.one_sided.items():
            base = r.base_size
            lat = v["latency"].get(base) if base in v["latency"] else None
            gap = v["gap"].get(base) if base in v["gap"] else None
            rows.append([mode, "op + completion", _us(lat), _us(gap), sig(v["G"].point * 1e9) if v.get("G") else "-"])
        out += [
            "  " + line
            for line in table(
                ["mode", "latency is", f"latency {r.base_size}B", f"gap {r.base_size}B", "G"],
                rows,
                [False, False, True, True, True],
            ).splitlines()
        ]
        out.append(
            "  two-sided latency is EEL (one-way); one-sided: the origin's operation until "
            "its completion (flush or fence)"
        )
    return "\n".join(out) + "\n"


def _knee(o):
    if o is None or o.knee is None:
        return "-"
    lo, hi = o.knee
    return f"{sig(lo * 1e6, 3)}..{sig(hi * 1e6, 3)}"


def loggp_json(r: LogGPResult) -> str:
    return json_document("loggp", r.to_dict())
