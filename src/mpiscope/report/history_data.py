# SPDX-License-Identifier: BSD-3-Clause
"""The history page (`mpiscope history --report FILE`): per series a trend
chart drawn as inline SVG (every run's median with its 95% interval, the
level of each segment, a dashed line at every change point), and beside it
each change point with its step and what differed between the runs on
either side; the --check verdict of the newest run when asked."""

from __future__ import annotations

import datetime
import math

from mpiscope.views.history import percent, scale
from mpiscope.views.text import sig

LEFT, RIGHT, TOP, BOTTOM = 70, 20, 14, 34  # px around the plot area
PLOT_W, PLOT_H = 640, 220
WIDE = 1.5  # intervals reaching past WIDE × the medians' range are cut at the axis


def _axis(points):
    """(low, high) of the y axis: every median and interval, save intervals
    that reach far beyond the medians (they are cut at the edge)."""
    meds = [p.median for p in points]
    lo, hi = min(meds), max(meds)
    span = hi - lo or abs(hi) * 0.05 or 1.0
    lo = max(min(p.ci_low for p in points), lo - WIDE * span)
    hi = min(max(p.ci_high for p in points), hi + WIDE * span)
    pad = 0.05 * (hi - lo or 1.0)
    return lo - pad, hi + pad


def _ticks(lo, hi, count=5):
    step = (hi - lo) / count
    magnitude = 10 ** math.floor(math.log10(step)) if step > 0 else 1.0
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= step)
    first = math.ceil(lo / step) * step
    return [first + i * step for i in range(int((hi - first) / step) + 1)]


def chart(trend) -> dict:
    """SVG coordinates of one series' trend."""
    points, unit = trend.series.points, trend.series.key.unit
    f, name = scale(unit)
    lo, hi = _axis(points)
    n = len(points)

    def x(i):
        return round(LEFT + PLOT_W * ((i + 0.5) / n), 1)

    def y(v):
        v = min(max(v, lo), hi)
        return round(TOP + PLOT_H * (1 - (v - lo) / (hi - lo)), 1)

    runs = [
        {
            "x": x(i),
            "y": y(p.median),
            "y0": y(p.ci_low),
            "y1": y(p.ci_high),
            "title": f"{p.run_id} ({p.created[:16].replace('T', ' ')}): {sig(p.median * f)} {name} "
            f"[{sig(p.ci_low * f)}, {sig(p.ci_high * f)}]",
        }
        for i, p in enumerate(points)
    ]
    bounds = [0, *(c.index for c in trend.changes), n]
    levels = []
    for k, c in enumerate(trend.changes):
        before = c.step.before
        levels.append({"x0": x(bounds[k]) - 3, "x1": x(bounds[k + 1] - 1) + 3, "y": y(before.median)})
    if trend.changes:
        after = trend.changes[-1].step.after
        levels.append({"x0": x(bounds[-2]) - 3, "x1": x(n - 1) + 3, "y": y(after.median)})
    changes = [
        {
            "x": round(LEFT + PLOT_W * (c.index / n), 1),
            "label": percent(c.step.step),
            "slower": c.step.direction == "slower",
        }
        for c in trend.changes
    ]
    return {
        "width": LEFT + PLOT_W + RIGHT,
        "height": TOP + PLOT_H + BOTTOM,
        "left": LEFT,
        "right": LEFT + PLOT_W,
        "top": TOP,
        "bottom": TOP + PLOT_H,
        "ticks": [{"y": y(t), "label": sig(t * f)} for t in _ticks(lo, hi) if lo <= t <= hi],
        "unit": name,
        "runs": runs,
        "levels": levels,
        "changes": changes,
        "first": points[0].created[:10],
        "last": points[-1].created[:10],
    }


def _change(c, unit) -> dict:
    f, name = scale(unit)
    s = c.step
    return {
        "run": c.first_after.run_id,
        "date": c.first_after.created[:16].replace("T", " "),
        "before_run": c.last_before.run_id,
        "direction": s.direction,
        "step": f"{100 * abs(s.step):.1f}%",
        "interval": f"[{percent(s.low)}, {percent(s.high)}]",
        "levels": f"{sig(s.before.median * f)} → {sig(s.after.median * f)} {name}",
        "runs": f"{s.before.runs} before, {s.after.runs} after",
        "changed": [d.to_dict() for d in c.changed],
    }


def gather(trends, roots, threshold, judgements=None) -> dict:
    """The template's data for the history page."""
    by_key = {j.series.key: j for j in judgements or ()}
    series = []
    for i, t in enumerate(trends, 1):
        key = t.series.key
        j = by_key.get(key)
        series.append(
            {
                "id": f"series-{i}",
                "name": key.name(),
                "where": key.where(),
                "runs": len(t.series.points),
                "chart": chart(t),
                "changes": [_change(c, key.unit) for c in t.changes],
                "check": None
                if j is None
                else {
                    "status": j.status,
                    "step": None
                    if j.step is None
                    else f"{percent(j.step.step)} [{percent(j.step.low)}, {percent(j.step.high)}]",
                },
            }
        )
    return {
        "generated": datetime.datetime.now().isoformat(timespec="seconds"),
        "roots": [str(r) for r in roots],
        "threshold": f"{100 * threshold:g}%",
        "series": series,
        "runs": len({p.run_id for t in trends for p in t.series.points}),
        "checked": judgements is not None,
    }
