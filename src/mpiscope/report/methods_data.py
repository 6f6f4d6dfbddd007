# SPDX-License-Identifier: BSD-3-Clause
"""The report's section on the peers' methods (methods/result.py), for each
run measured with `mpiscope run --methods`: per benchmark, every tool's
number beside mpiscope's median and the terms of the difference, as a table
and a figure."""

from __future__ import annotations

from mpiscope.methods.attribution import CAUSES
from mpiscope.methods.result import NoToolMeasured, methods_of_run
from mpiscope.report.pool import draw
from mpiscope.views.methods import scale


def _section(bench, rows):
    causes = [c for c in CAUSES if any(c in a.by_cause() for r in rows for a in r.tools)]
    panels, table = [], []
    for r in rows:
        f, unit = scale(r.unit)
        pct = (lambda x: 100 * x / r.median) if r.median else (lambda x: float("nan"))  # noqa: E731
        panels.append(
            {
                "title": f"{r.size} B: mpiscope {r.median * f:.4g} {unit}",
                "tools": [a.derivation.series.method for a in r.tools],
                "terms": {c: [pct(a.by_cause().get(c, 0.0)) for a in r.tools] for c in causes},
                "difference": [pct(a.difference) for a in r.tools],
            }
        )
        for a in r.tools:
            by = a.by_cause()
            table.append(
                {
                    "size": r.size,
                    "unit": unit,
                    "median": r.median * f,
                    "ci_low": r.ci[0] * f,
                    "ci_high": r.ci[1] * f,
                    "tool": a.derivation.series.method,
                    "number": a.derivation.number * f,
                    "difference": a.difference * f,
                    "terms": [by.get(c) * f if c in by else None for c in causes],
                }
            )
    return {"bench": bench, "causes": causes, "rows": table, "svg": draw("method_terms", panels, causes)}


def methods_views(runs) -> list:
    """[{run, sections}] for the runs measured with --methods; runs: [(label, run_dir, table, run)]."""
    out = []
    for label, run_dir, table, run in runs:
        if not run.context.get("methods"):
            continue
        try:
            result = methods_of_run(run_dir, table, run)
        except NoToolMeasured:
            continue  # references only: no tool to show (damaged method data stops the report)
        by_bench = {}
        for r in result.rows:
            by_bench.setdefault(r.bench, []).append(r)
        out.append({"run": label, "causes": CAUSES, "sections": [_section(b, rows) for b, rows in by_bench.items()]})
    return out
