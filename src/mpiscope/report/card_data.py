# SPDX-License-Identifier: BSD-3-Clause
"""The report's opening card, one per run: the numbers a reader looks for
first (latency at 8 B, peak bandwidth, every collective at 8 B, 64 KiB and
1 MiB) and the quality banner saying how far the run's numbers hold."""

from __future__ import annotations

from mpiscope.common.sizes import format_size
from mpiscope.stats import quality
from mpiscope.stats.summary import summarize
from mpiscope.store.series import bench_label

LATENCY_SIZE = 8
LATENCY_BENCHES = ("pingpong", "oneway")  # the first one measured at 8 B is the latency
COLLECTIVE_SIZES = (8, 64 * 1024, 1024 * 1024)


def _cell(samples, verdict, size):
    """Median and its 95% CI in display units (µs, MB/s), with the series' flags."""
    factor = 1e-6 if samples.unit == "B/s" else 1e6
    st = summarize(samples.values)
    return {
        "size": size,
        "median": st["median"] * factor,
        "low": st["ci_low"] * factor,
        "high": st["ci_high"] * factor,
        "n": st["n"],
        "flags": list(verdict.flags) if verdict else [],
    }


def card(label, series, verdicts, run) -> dict:
    """The card of one run. series: its all_series_samples; verdicts: theirs, in order."""
    by = {(b, a, int(s)): (smp, v) for (b, a, s, smp), v in zip(series, verdicts)}
    latency = next(
        (
            {"bench": b, **_cell(*by[(b, "mpi", LATENCY_SIZE)], LATENCY_SIZE)}
            for b in LATENCY_BENCHES
            if (b, "mpi", LATENCY_SIZE) in by
        ),
        None,
    )
    bandwidth, collectives = [], {}
    for (bench, algo, size), (smp, v) in by.items():
        if smp.unit == "B/s" and len(smp.values):
            cell = _cell(smp, v, size)
            peak = next((x for x in bandwidth if x["bench"] == bench_label(bench, algo)), None)
            if peak is None:
                bandwidth.append({"bench": bench_label(bench, algo), **cell})
            elif cell["median"] > peak["median"]:
                peak.update(cell)
        elif smp.collective:
            collectives.setdefault(bench_label(bench, algo), {})[size] = _cell(smp, v, size)
    rows, sizeless = [], []
    for name, cells in collectives.items():
        if set(cells) == {0}:
            sizeless.append({"bench": name, **cells[0]})  # barrier: no payload
        elif any(s in cells for s in COLLECTIVE_SIZES):
            rows.append({"bench": name, "cells": [cells.get(s) for s in COLLECTIVE_SIZES]})
    return {
        "label": label,
        "latency": latency,
        "bandwidth": bandwidth,
        "collectives": rows,
        "sizeless": sizeless,
        "collective_sizes": [f"{format_size(s)} B" for s in COLLECTIVE_SIZES],
        "headline": quality.headline(verdicts),
        "clean": quality.clean(verdicts) == sum(1 for v in verdicts if not v.skipped),
        "warnings": quality.warnings(verdicts, run),
    }
