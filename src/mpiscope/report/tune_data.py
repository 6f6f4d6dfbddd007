# SPDX-License-Identifier: BSD-3-Clause
"""The report's tuning section (`mpiscope tune`'s tune.json): per collective
the winner map (message size × communicator size), the change-over points of
the tuned rules against the library's default and the cost models', the
verified speedups with their intervals, and where one of our own algorithms
beats every algorithm the library offers."""

from __future__ import annotations

import datetime
from pathlib import Path

from mpiscope.common.sizes import format_size
from mpiscope.mpilibs.algorithm_catalog import DEFAULT
from mpiscope.report.pool import draw, resolved
from mpiscope.stats.compare import SAME
from mpiscope.views.tune import same_code_lines
from mpiscope.tune.result_file import read as read_result

RESULT = "tune.json"


def tune_dir_of(run_dir) -> Path | None:
    """The tune output a run belongs to (its runs live in DIR/runs/), or None."""
    d = Path(run_dir).resolve().parent.parent
    return d if (d / RESULT).is_file() else None


def _default_looks_like(rows) -> str | None:
    """Which forced algorithm the library's default matches at a cell: the
    one compare finds the same as the default, with the ratio nearest 1. An
    inference from times (release builds do not say what they chose)."""
    same = [r for r in rows if r["algorithm"] != DEFAULT and r.get("verdict") == SAME]
    if not same:
        return None
    return min(same, key=lambda r: abs(r["ratio"] - 1.0))["algorithm"]


def _changes(seq):
    """[(size, name)] → change-overs where consecutive known names differ."""
    known = [(s, n) for s, n in seq if n]
    return [
        {"size": b[0], "label": format_size(b[0]), "from": a[1], "to": b[1]}
        for a, b in zip(known, known[1:])
        if a[1] != b[1]
    ]


def _collective_view(r, coll):
    p_default = r["p"]
    decisions = [d for d in r["decisions"] if d["collective"] == coll]
    ps = sorted({d.get("p", p_default) for d in decisions})
    sizes = sorted({d["size"] for d in decisions})
    checked = {(v.get("p", p_default), v["size"]): v for v in r["verification"]["cells"] if v["collective"] == coll}
    # what the default runs, read from the library where it was (mpilibs: read_defaults)
    read = {(x["p"], x["size"]): x["algorithm"] for x in r.get("default_runs", []) if x["collective"] == coll}
    cells, winners = {}, {}
    for d in decisions:
        p = d.get("p", p_default)
        v = checked.get((p, d["size"]), {})
        winners[(p, d["size"])] = d["winner"]
        cells[(p, d["size"])] = {
            "winner": d["winner"],
            "measured": d["measured"],
            "default_like": read.get((p, d["size"])) or _default_looks_like(d["rows"]),
            "default_read": (p, d["size"]) in read,
            "rule": v.get("rule"),
            "speedup": v.get("speedup"),
            "low": v.get("speedup_low"),
            "high": v.get("speedup_high"),
            "verdict": v.get("verdict"),
        }
    rows = [{"p": p, "cells": [cells.get((p, s)) for s in sizes]} for p in ps]
    changeovers = []
    for p in ps:
        tuned = [(s, winners.get((p, s))) for s in sizes]
        # the tuned choice spelled out: 'default' replaced by what the default looks like
        resolved_ = [(s, cells[(p, s)]["default_like"] if w == DEFAULT else w) for s, w in tuned if (p, s) in cells]
        lib = [(s, cells[(p, s)]["default_like"]) for s in sizes if (p, s) in cells]
        ch = r.get("changeovers", {}).get(coll, {})
        by_p = ch.get("by_p", {}).get(str(p), ch) if ch else {}
        model = by_p.get("model")
        changeovers.append(
            {
                "p": p,
                "tuned": _changes(resolved_),
                "library": _changes(lib),
                "model": None if model is None else [{**x, "label": format_size(x["size"])} for x in model],
            }
        )
    names = sorted({w for w in winners.values()})
    return {
        "collective": coll,
        "sizes": [format_size(s) for s in sizes],
        "rows": rows,
        "changeovers": changeovers,
        "map": {
            "title": coll,
            "sizes": [format_size(s) for s in sizes],
            "ps": ps,
            "names": names,
            "grid": [[names.index(winners[(p, s)]) if (p, s) in winners else -1 for s in sizes] for p in ps],
        },
    }


def tune_view(r: dict, where: str) -> dict:
    colls = list(dict.fromkeys(d["collective"] for d in r["decisions"]))
    views = [_collective_view(r, c) for c in colls]
    v = r["verification"]
    own = r.get("own_algorithms") or []
    c = r["cells"]
    return {
        "where": where,
        "library": r["library"],
        "version": r["version"],
        "ps": sorted({d.get("p", r["p"]) for d in r["decisions"]}),
        "ppn": r.get("ppn"),
        "cluster": r.get("cluster"),
        "measured": c["measured"],
        "exhaustive": c["exhaustive"],
        "share": c["measured"] / c["exhaustive"] if c["exhaustive"] else None,
        "collectives": views,
        "svg": draw("winner_map", [x["map"] for x in views]) if views else None,
        "geomean": v.get("geomean_speedup"),
        "in_effect": v.get("file_in_effect"),
        "checked_by": v.get("checked_by"),
        "slower": v.get("slower_beyond_noise") or [],
        "withdrawn": r.get("withdrawn") or [],
        "weighted": r.get("weighted") and {"by_p": {}, "not_measured": [], **r["weighted"]},
        "own_wins": [{"p": r["p"], **x, "label": format_size(x["size"])} for x in own if x["own_beats_library"]],
        "own_tried": len(own),
        "files": r.get("files") or {},
        "same_code": same_code_lines(r),
    }


def tune_views(run_dirs) -> list:
    """One view per tune output among the runs' (each once)."""
    seen, out = [], []
    for d in run_dirs:
        t = tune_dir_of(d)
        if t is not None and t not in seen:
            seen.append(t)
            out.append(tune_view(read_result(t / RESULT), str(t)))
    return out


def gather(tune_dirs) -> dict:
    """The data of a report on tune outputs only (`mpiscope report TUNE_DIR`)."""
    views = [tune_view(read_result(Path(t) / RESULT), str(t)) for t in tune_dirs]
    return resolved({"generated": datetime.datetime.now().isoformat(timespec="seconds"), "tune": views})
