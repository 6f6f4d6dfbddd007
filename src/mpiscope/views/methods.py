# SPDX-License-Identifier: BSD-3-Clause
"""Text and JSON forms of `mpiscope methods` (methods/result.py): per
benchmark and size, mpiscope's median with its 95% CI, each tool's number,
and the terms of the difference by cause."""

from __future__ import annotations

import math

from mpiscope.common.sizes import format_size
from mpiscope.methods.attribution import CAUSES
from mpiscope.methods.result import MethodsResult
from mpiscope.common.documents import json_document
from mpiscope.views.show import describe
from mpiscope.views.text import sig, table

SHORT = {"root_rotation": "root"}  # column names; the other causes are their own


def scale(unit: str) -> tuple[float, str]:
    """Display factor and unit: µs for times, MB/s (10^6 B/s) for bandwidths."""
    return (1e-6, "MB/s") if unit == "B/s" else (1e6, "us")


def _decimals(reference: float) -> int:
    """Decimals that give `reference` four significant digits: every number
    of a row is printed to that one resolution, so columns line up and a
    term far below it reads 0."""
    if not reference or not math.isfinite(reference):
        return 3
    return max(0, 3 - math.floor(math.log10(abs(reference))))


def _num(x, f, places, signed=False) -> str:
    if x is None or not math.isfinite(x):
        return "-"
    text = f"{x * f:+.{places}f}" if signed else f"{x * f:.{places}f}"
    return text.replace("-0." + "0" * places, "+0." + "0" * places) if places else text


def _printed(printed: dict) -> str:
    return ", ".join(f"{k} {sig(v) if isinstance(v, float) else v}" for k, v in printed.items())


def format_methods(r: MethodsResult) -> str:
    out = [
        describe(r.run),
        "each tool's number beside mpiscope's median (95% CI), and their difference split into "
        "measured causes that add up to it (`mpiscope methods --json` says what each term compares)",
    ]
    for row in r.rows:
        f, unit = scale(row.unit)
        places = _decimals(row.median * f)
        causes = [c for c in CAUSES if any(c in a.by_cause() for a in row.tools)]
        out += [
            "",
            f"{row.bench} {format_size(row.size)} B ({unit}): mpiscope median "
            f"{_num(row.median, f, places)} [{_num(row.ci[0], f, places)}, {_num(row.ci[1], f, places)}], "
            f"{row.n} samples",
        ]
        lines = []
        for a in row.tools:
            by = a.by_cause()
            lines.append(
                [
                    a.derivation.series.method,
                    _num(a.derivation.number, f, places),
                    _num(a.difference, f, places, signed=True),
                ]
                + [_num(by[c], f, places, signed=True) if c in by else "·" for c in causes]
            )
        header = ["tool", "number", "difference"] + [SHORT.get(c, c) for c in causes]
        out += ["  " + x for x in table(header, lines, [False] + [True] * (len(header) - 1)).splitlines()]
        for a in row.tools:
            out.append(f"  {a.derivation.series.method} prints: {_printed(a.derivation.printed)}")
    out += ["", "causes: " + "; ".join(f"{SHORT.get(c, c)}: {text}" for c, text in CAUSES.items())]
    return "\n".join(out) + "\n"


def _tool(a) -> dict:
    d = a.derivation
    e = d.series.entry
    return {
        "method": d.series.method,
        "tool": e.get("tool"),
        "number": d.number,
        "printed": d.printed,
        "repetitions": d.n,
        "difference": a.difference,
        "timing": e.get("timing"),
        "start": e.get("start"),
        "root": e.get("root"),
        "cache": e.get("cache"),
        "ranks": e.get("ranks"),
        "datatype": e.get("datatype"),
        "count": e.get("count"),
        "params": e.get("params") or {},
        "terms": [{"cause": t.cause, "what": t.what, "value": t.value} for t in a.terms],
        "by_cause": a.by_cause(),
    }


def methods_json(r: MethodsResult) -> str:
    return json_document(
        "methods",
        {
            "run_id": r.run.run_id,
            "np": r.run.np,
            "library": r.run.library,
            "launches": r.run.launches or 1,
            "causes": CAUSES,
            "rows": [
                {
                    "bench": row.bench,
                    "size": row.size,
                    "unit": row.unit,
                    "median": row.median,
                    "ci_low": row.ci[0],
                    "ci_high": row.ci[1],
                    "n": row.n,
                    "tools": [_tool(a) for a in row.tools],
                }
                for row in r.rows
            ],
        },
    )
