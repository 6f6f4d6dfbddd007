# SPDX-License-Identifier: BSD-3-Clause
"""The report of an app run (`mpiscope app compare`): the whole story on
one page. The measured answer (per configuration its launches, median,
speedup against the default with its interval and verdict) and the
predicted speedup beside it (the profile's cells each with the tune's
verified speedup, and what carries a disagreement); the what-if at more
ranks when the run made one (--whatif-p); then the profile the prediction
read (where the time goes: profile_data.py's section) and the tune whose
configuration was measured (what it changed and its verified cells:
tune_data.py's section)."""

from __future__ import annotations

import datetime
import math
from pathlib import Path

from mpiscope.app.app_run import load
from mpiscope.common.errors import UsageError
from mpiscope.common.sizes import format_size
from mpiscope.report.pool import resolved
from mpiscope.report.profile_data import profile_view
from mpiscope.report.tune_data import RESULT, tune_view
from mpiscope.store import catalog
from mpiscope.views.app import app_doc
from mpiscope.tune.result_file import read as read_result

CHART_WIDTH = 560  # px of the interval chart's axis
CHART_MARGIN = 150  # px left of it for the labels
CHART_TEXT = 170  # px right of it for the last interval's numbers


def _interval_chart(rows):
    """Speedup intervals on one axis as SVG coordinates: rows of (label,
    point, low, high, kind); the axis spans every interval and 1."""
    rows = [r for r in rows if r[1] is not None and all(math.isfinite(x) for x in r[1:4] if x is not None)]
    if not rows:
        return None
    lo = min([1.0] + [r[2] if r[2] is not None else r[1] for r in rows])
    hi = max([1.0] + [r[3] if r[3] is not None else r[1] for r in rows])
    pad = 0.05 * (hi - lo or 1.0)
    lo, hi = lo - pad, hi + pad

    def x(v):
        return round(CHART_MARGIN + CHART_WIDTH * (v - lo) / (hi - lo), 1)

    bars = [
        {
            "label": label,
            "kind": kind,
            "y": 30 + 26 * i,
            "x": x(point),
            "x0": x(low if low is not None else point),
            "x1": x(high if high is not None else point),
            "text": f"{point:.3g}" + (f" [{low:.3g}, {high:.3g}]" if low is not None and high is not None else ""),
        }
        for i, (label, point, low, high, kind) in enumerate(rows)
    ]
    return {
        "width": CHART_MARGIN + CHART_WIDTH + CHART_TEXT,
        "height": 50 + 26 * len(rows),
        "one": x(1.0),
        "left": CHART_MARGIN,
        "right": CHART_MARGIN + CHART_WIDTH,
        "ticks": [{"x": x(t), "label": f"{t:g}"} for t in _ticks(lo, hi)],
        "bars": bars,
    }


def _ticks(lo, hi):
    """At most 8 round values between lo and hi."""
    step = 10 ** math.floor(math.log10((hi - lo) / 2)) if hi > lo else 0.1
    while (hi - lo) / step > 8:
        step *= 2
    t = math.ceil(lo / step) * step
    out = []
    while t <= hi + 1e-12:
        out.append(round(t, 10))
        t += step
    return out


def _bin(lo, hi) -> str:
    return f"{format_size(lo)}–{format_size(hi + 1)}" if hi > lo else format_size(lo)


def _prediction_view(p):
    if not p:
        return None
    if p.get("speedup") is None:
        return {"failed": p.get("error") or "not computed", "config": p.get("config")}
    measured = p.get("measured")
    rows = (
        [(f"{p['config']}: measured", measured["point"], measured["low"], measured["high"], "measured")]
        if measured
        else []
    )
    rows.append((f"{p['config']}: predicted", p["speedup"], p["low"], p["high"], "predicted"))
    cells = sorted(p.get("cells") or (), key=lambda c: -c["time_s"])
    return {
        **p,
        "failed": None,
        "agree": p.get("agree"),
        "explanation": p.get("explanation"),
        "chart": _interval_chart(rows),
        "cells": [
            {
                **c,
                "bin": _bin(c["lo"], c["hi"]),
                "tuned_label": format_size(c["tuned_size"]) if c.get("tuned_size") is not None else "–",
            }
            for c in cells
        ],
        "verified_cells": sum(c["status"] == "verified" for c in cells),
    }


def _answer_chart(results):
    rows = [
        (r["config"], r["speedup"]["point"], r["speedup"]["low"], r["speedup"]["high"], "measured")
        for r in results
        if r.get("speedup")
    ]
    return _interval_chart(rows)


def _whatif_view(w):
    if not w:
        return None
    if w.get("failed") or "points" not in w:
        return {"failed": w.get("failed") or "not computed"}
    return {
        **w,
        "failed": None,
        "all_points": [w["validation"], *w["points"]],
        "chart": _interval_chart(
            [
                (f"{x['p']} ranks", x["speedup"]["median"], x["speedup"]["low"], x["speedup"]["high"], "predicted")
                for x in [w["validation"], *w["points"]]
            ]
        ),
        "selections": _selections(w.get("selections") or ()),
        "untouched": _untouched(w.get("selections") or ()),
    }


def _selections(selections):
    """The selections either side knows, one row per collective, communicator
    size and choice, with the sizes it holds for."""
    rows = {}
    for s in selections:
        if s["default"] or s["tuned"]:
            key = tuple(s[k] for k in ("collective", "p", "default", "tuned", "ours_default", "ours_tuned", "note"))
            rows.setdefault(key, []).append(s["size"])
    return [
        {
            **dict(zip(("collective", "p", "default", "tuned", "ours_default", "ours_tuned", "note"), key)),
            "sizes": ", ".join(format_size(x) for x in sorted(sizes)),
        }
        for key, sizes in rows.items()
    ]


def _untouched(selections):
    """Per collective neither selection knows (kept as traced): how many sizes, and why."""
    out = {}
    for s in selections:
        if not (s["default"] or s["tuned"]):
            sizes, _ = out.setdefault(s["collective"], (set(), s["note"]))
            sizes.add(s["size"])
    return [{"collective": c, "sizes": len(sizes), "note": note} for c, (sizes, note) in out.items()]


def _run_of(out: Path, ref):
    """The run directory of `ref` beside the app run, or None when it is gone."""
    try:
        return catalog.resolve(out, ref)
    except UsageError:
        return None


def _tune_dirs(doc):
    """The tune directories the run measured (its configurations of kind tune), the prediction's first."""
    p = doc.get("prediction") or {}
    dirs = [p["tune"]] if p.get("tune") else []
    dirs += [c["source"] for c in doc["configs"] if c["kind"] == "tune"]
    return [Path(d) for d in dict.fromkeys(dirs) if (Path(d) / RESULT).is_file()]


def gather(run_dir) -> dict:
    """Everything the report of the app run in `run_dir` shows."""
    run_dir = Path(run_dir)
    doc = app_doc(load(run_dir))
    p = doc.get("prediction") or {}
    w = doc.get("whatif") or {}
    profile_ref = p.get("profile") or w.get("run_id")
    profile_dir = _run_of(run_dir.parent, profile_ref) if profile_ref else None
    tunes = _tune_dirs(doc)
    return resolved(
        {
            "generated": datetime.datetime.now().isoformat(timespec="seconds"),
            "app": {**doc, "command_text": " ".join(map(str, doc["command"])), "chart": _answer_chart(doc["results"])},
            "prediction": _prediction_view(p),
            "whatif": _whatif_view(w),
            "profile_ref": profile_ref,
            "profile_missing": bool(profile_ref) and profile_dir is None,
            "profiles": [profile_view(profile_dir)] if profile_dir else [],
            **_tune_views(tunes),
        }
    )


def _tune_views(tunes) -> dict:
    """The tune section of each tune the run read; a tune.json that is not a
    whole tune result (damaged, or written by hand) is named instead."""
    views, unreadable = [], []
    for t in tunes:
        try:
            views.append(tune_view(read_result(t / RESULT), str(t)))
        except (UsageError, ValueError, KeyError, TypeError) as exc:
            unreadable.append({"where": str(t / RESULT), "why": f"{type(exc).__name__}: {exc}"})
    return {"tune": views, "tune_unreadable": unreadable}
