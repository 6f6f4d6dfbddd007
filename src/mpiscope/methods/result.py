# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope methods RUN`: per benchmark and size, mpiscope's median with
its 95% CI, and beside it every peer's number with the terms of its
difference (attribution.py), for a run measured with --methods."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from mpiscope.common.errors import UsageError
from mpiscope.methods import imb, mpibench, mpptest, osu, skampi
from mpiscope.methods.attribution import Attribution, attribute
from mpiscope.methods.reference import call_times
from mpiscope.methods.stored import load_series
from mpiscope.stats.summary import median_ci
from mpiscope.store.ingest import load
from mpiscope.store.run import Run
from mpiscope.store.samples import sample_values

# The tools, in the order their columns are shown.
TOOLS = {"osu": osu, "imb": imb, "skampi": skampi, "mpptest": mpptest, "mpibench": mpibench}


@dataclass
class Row:
    """One benchmark × size: mpiscope's median (its samples, every launch) and the tools'."""

    bench: str
    size: int
    unit: str
    median: float
    ci: tuple
    n: int
    tools: list = field(default_factory=list)  # Attribution, in TOOLS order


class NoToolMeasured(UsageError):
    """The run holds no peer's method (references alone, or none at all)."""


@dataclass
class MethodsResult:
    run: Run
    rows: list


def _combine(attrs: list) -> Attribution:
    """One launch's attribution, or the mean over launches of numbers and
    terms (the terms still add up to the difference from the pooled median).
    Launches whose terms differ (a reference series missing from one) are
    not averaged: the first launch's stands."""
    first = attrs[0]
    if len(attrs) == 1 or any([t.cause for t in a.terms] != [t.cause for t in first.terms] for a in attrs):
        return first
    number = float(np.mean([a.derivation.number for a in attrs]))
    terms = [
        dataclasses.replace(t, value=float(np.mean([a.terms[i].value for a in attrs])))
        for i, t in enumerate(first.terms)
    ]
    return Attribution(dataclasses.replace(first.derivation, number=number), first.median, first.ci, terms)


def methods_of_run(run_dir, table=None, run=None) -> MethodsResult:
    """Every benchmark and size of the run (its samples `table` and `run`
    when already loaded)."""
    if table is None or run is None:
        table, run = load(run_dir)
    series = load_series(run_dir, run)
    if not any(s.method in TOOLS for s in series):
        raise NoToolMeasured(
            f"run {run.run_id} measured no peer's method: measure one with `mpiscope run "
            "--methods osu,imb` (or all), then read it with `mpiscope methods`"
        )
    groups = {}  # (bench, size) -> launch -> method -> series, in run order
    for s in series:
        groups.setdefault((s.bench, s.size), {}).setdefault(s.launch, {})[s.method] = s
    rows = []
    for (bench, size), launches in groups.items():
        own = sample_values(table, bench, size, algo="mpi", run=run)
        lo, hi = median_ci(own.values) if len(own.values) else (float("nan"), float("nan"))
        med = float(np.median(own.values)) if len(own.values) else float("nan")
        per_tool = {}
        for by_method in launches.values():
            refs = {name: call_times(s) for name, s in by_method.items() if name not in TOOLS}
            for name, module in TOOLS.items():
                d = module.derive(by_method[name]) if name in by_method else None
                if d is not None:
                    per_tool.setdefault(name, []).append(attribute(d, refs, med, (lo, hi)))
        unit = own.unit if len(own.values) else ("B/s" if bench == "bw" else "s")
        rows.append(
            Row(
                bench,
                size,
                unit,
                med,
                (lo, hi),
                len(own.values),
                [_combine(per_tool[name]) for name in TOOLS if name in per_tool],
            )
        )
    return MethodsResult(run, rows)
