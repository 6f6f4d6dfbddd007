# SPDX-License-Identifier: BSD-3-Clause
"""Text and JSON forms of a LayersResult (layers.py)."""

from __future__ import annotations

from mpiscope.models.layers import LayersResult
from mpiscope.stats.quality import MIN_SAMPLES
from mpiscope.common.sizes import format_size
from mpiscope.common.documents import json_document
from mpiscope.views.text import interval, sig, table
from mpiscope.views.show import describe

_WHAT = {"layer_pingpong": "ping-pong, half round trip", "layer_bw": "stream, time per message"}


def _share(e):
    """lower / MPI as a share of MPI's time; above 100% it is no share but a
    ratio (the layer is slower than MPI), printed as one: 3.2×."""
    if e is None:
        return "-"
    return f"{sig(e.point, 3)}×" if e.point > 1 else f"{100 * e.point:.0f}%"


def format_layers(r: LayersResult) -> str:
    ci = f"ci{round(r.level * 100):d}"
    out = [
        describe(r.run),
        f"the same message over MPI and the layers below it; {round(r.level * 100)}% CIs: "
        f"bootstrap within each series ({r.n_boot} resamples, seed {r.seed})",
    ]
    if r.transport:
        out.append(
            "ranks 0 and 1 are "
            + (
                "on one host: MPI most likely uses shared memory"
                if r.transport == "shm"
                else "on different hosts: MPI most likely uses the network (tcp)"
            )
        )
    for bench in ("layer_pingpong", "layer_bw"):
        layers = r.layers(bench)
        if not layers:
            continue
        out += ["", f"{bench} ({_WHAT[bench]}): median (us) and share of MPI's time"]
        sizes = sorted({s for l in layers for s in r.curves[(bench, l)].times})
        header = ["size(B)"]
        for l in layers:
            header.append(l)
            if l != "mpi":
                header.append(f"{l}/mpi")
        if bench == "layer_bw":
            header += [f"{l} MB/s" for l in layers]
        rows = []
        for size in sizes:
            row = [format_size(size)]
            for l in layers:
                e = r.curves[(bench, l)].times.get(size)
                row.append("-" if e is None else sig(e.point * 1e6))
                if l != "mpi":
                    row.append(_share(r.shares.get((bench, l), {}).get(size)))
            if bench == "layer_bw":
                for l in layers:
                    e = r.curves[(bench, l)].times.get(size)
                    row.append("-" if e is None or not e.point > 0 else sig(size / e.point / 1e6))
            rows.append(row)
        out += ["  " + line for line in table(header, rows, [False] + [True] * (len(header) - 1)).splitlines()]
        if any(cell.endswith("×") for row in rows for cell in row):
            out.append("  ×: the layer takes longer than MPI there; lower / MPI as a ratio, not a share of MPI's time")
        for l in layers:
            c = r.curves[(bench, l)]
            if c.few():
                out.append(
                    f"  {l}: insufficient data at {', '.join(format_size(s) + ' B' for s in c.few())}: "
                    f"fewer than {MIN_SAMPLES} valid samples give a median no 95% CI"
                )
            reasons = sorted(set(c.skipped.values()))
            if reasons:
                out.append(f"  {l}: skipped ({'; '.join(reasons)})")
        for l in layers:
            c = r.curves[(bench, l)]
            if c.fit is None:
                if c.note and c.times:
                    out.append(f"  {l}: {c.note}")
                continue
            pw = c.fit
            breaks = "; ".join(f"{format_size(a)}-{format_size(b)} B" for a, b in pw.breaks)
            where = f"breaks between {breaks}" if breaks else "no break"
            out.append(f"  {l}: piecewise α + β·n ({pw.criterion}), {pw.n_segments} segment(s), {where}")
            seg_rows = [
                [
                    f"{format_size(s.first_size)}-{format_size(s.last_size)}",
                    str(s.n_sizes),
                    sig(s.alpha.point * 1e6),
                    interval(s.alpha.low * 1e6, s.alpha.high * 1e6),
                    sig(s.beta.point * 1e9),
                    interval(s.beta.low * 1e9, s.beta.high * 1e9),
                    sig(s.bandwidth.point / 1e6) if s.beta.point > 0 else "-",
                    "-" if s.r2 != s.r2 else f"{s.r2:.4f}",
                ]
                for s in pw.segments
            ]
            out += [
                "    " + line
                for line in table(
                    ["sizes(B)", "n", "α(us)", f"α {ci}", "β(ns/B)", f"β {ci}", "1/β(MB/s)", "R²"],
                    seg_rows,
                    [False, True, True, False, True, False, True, True],
                ).splitlines()
            ]
    return "\n".join(out) + "\n"


def layers_json(r: LayersResult) -> str:
    return json_document("layers", r.to_dict())
