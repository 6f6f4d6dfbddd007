# SPDX-License-Identifier: BSD-3-Clause
"""Report sections for the LogGP parameters (loggp.py) and the layers
(layers.py) of every run that measured them: tables as plain data and
figures as inline SVG (report/plots.py)."""

from __future__ import annotations

from mpiscope.common.errors import UsageError
from mpiscope.models.layers import layers_series
from mpiscope.models.loggp import loggp_series
from mpiscope.report.pool import draw
from mpiscope.stats.quality import MIN_SAMPLES

US = 1e6
_PARAMS = (
    ("EEL", "EEL", US, "µs"),
    ("o_s", "o_s", US, "µs"),
    ("o_r", "o_r", US, "µs"),
    ("g", "g", US, "µs"),
    ("G", "G", 1e9, "ns/B"),
    ("bandwidth", "1/G", 1e-6, "MB/s"),
    ("L", "L", US, "µs"),
    ("g_over_G", "g/G", 1.0, "B"),
    ("overlap", "EEL − (o_s + o_r)", US, "µs"),
)


def _scaled(est, factor):
    return None if est is None else est.scaled(factor)


def loggp_views(runs, series, seed=1):
    """One LogGP section per run that has LogGP benchmarks: [dict].
    runs: [(label, run_dir, table, run)]; series: {label: series.all_series_samples}."""
    out = []
    for label, _, _, run in runs:
        try:
            r = loggp_series(series[label], run, seed=seed)
        except UsageError:
            continue  # this run has no LogGP benchmark
        params = [
            {
                "name": label_,
                "unit": unit,
                "value": _scaled(r.params.get(name), f),
                "n": r.samples.get(name),
                "source": r.sources.get(name, ""),
            }
            for name, label_, f, unit in _PARAMS
        ]
        send = {o.size: o for o in r.overheads["send"]}
        recv = {o.size: o for o in r.overheads["receive"]}
        sizes = sorted(set(r.eel) | set(send) | set(recv))
        rows = [
            {
                "size": s,
                "eel": _scaled(r.eel.get(s), US),
                "o_s": _scaled(send[s].value, US) if s in send else None,
                "o_r": _scaled(recv[s].value, US) if s in recv else None,
                "knee_s": send[s].knee if s in send else None,
                "knee_r": recv[s].knee if s in recv else None,
            }
            for s in sizes
        ]
        qs = sorted({q for v in r.gaps.values() for q in v})
        gap_rows = [
            {"size": s, "cells": [_scaled(r.gaps[s].get(q), US) for q in qs], "best": r.best_q.get(s)}
            for s in sorted(r.gaps)
        ]
        one_sided = [
            {
                "mode": m,
                "latency": _scaled(v["latency"].get(r.base_size), US),
                "gap": _scaled(v["gap"].get(r.base_size), US),
                "G": _scaled(v.get("G"), 1e9),
            }
            for m, v in r.one_sided.items()
        ]
        g, G = r.params.get("g"), r.params.get("G")
        out.append(
            {
                "label": label,
                "base_size": r.base_size,
                "params": params,
                "flags": r.flags,
                "min_samples": MIN_SAMPLES,
                "notes": r.notes,
                "rows": rows,
                "queue_depths": qs,
                "gap_rows": gap_rows,
                "one_sided": one_sided,
                "overheads_svg": draw(
                    "overheads_on_eel", [(x["size"], x["eel"], x["o_s"], x["o_r"]) for x in rows], r.base_size
                )
                if rows
                else None,
                "gap_svg": draw(
                    "gap_by_queue_depth", {s: {q: e.scaled(US) for q, e in v.items()} for s, v in r.gaps.items()}
                )
                if r.gaps
                else None,
                "gG_svg": draw(
                    "gap_per_size",
                    {s: r.gaps[s][r.best_q[s]].scaled(US) for s in r.gaps},
                    g.point * US if g else None,
                    G.point * US if G else None,
                )
                if r.gaps
                else None,
            }
        )
    return out


def layer_views(runs, series, seed=1):
    """One layers section per run that has layer benchmarks: [dict] (arguments as loggp_views)."""
    out = []
    for label, _, _, run in runs:
        try:
            r = layers_series(series[label], run, seed=seed)
        except UsageError:
            continue
        curves = {}
        for (bench, layer), c in r.curves.items():
            curves.setdefault(bench, {})[layer] = {s: e.scaled(US) for s, e in c.times.items()}
        tables = []
        for (bench, layer), c in r.curves.items():
            segs = (
                []
                if c.fit is None
                else [
                    {
                        "sizes": f"{s.first_size}–{s.last_size}",
                        "n": s.n_sizes,
                        "alpha_us": s.alpha.scaled(US),
                        "beta_ns": s.beta.scaled(1e9),
                        "bandwidth_mbs": s.bandwidth.scaled(1e-6) if s.beta.point > 0 else None,
                        "r2": s.r2,
                    }
                    for s in c.fit.segments
                ]
            )
            skipped = sorted(set(c.skipped.values()))
            tables.append(
                {
                    "bench": bench,
                    "layer": layer,
                    "segments": segs,
                    "breaks": [f"{a}–{b}" for a, b in (c.fit.breaks if c.fit else ())],
                    "skipped": "; ".join(skipped),
                    "note": c.note,
                }
            )
        share_rows = []
        for (bench, layer), by_size in r.shares.items():
            for size, e in sorted(by_size.items()):
                share_rows.append({"bench": bench, "layer": layer, "size": size, "share": e})
        out.append(
            {
                "label": label,
                "transport": r.transport,
                "tables": tables,
                "shares": share_rows,
                "svg": draw("layer_curves", curves),
            }
        )
    return out
