# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope history` as text (per series: a sparkline, a table of its runs'
medians with their 95% intervals, its change points with what changed) and
as the `history` JSON document."""

from __future__ import annotations

import math

from mpiscope.common.documents import json_document
from mpiscope.views.text import sig, table

SPARKS = "▁▂▃▄▅▆▇█"
SPARK_WIDTH = 72  # marks of a sparkline at most: longer series are binned
ROWS = 12  # runs a series' table shows by default: the newest, and those around each change


def scale(unit):
    """(factor, name) of the numbers shown: microseconds, or MB/s."""
    return (1e6, "us") if unit == "s" else (1e-6, "MB/s")


def sparkline(values) -> str:
    finite = [v for v in values if math.isfinite(v)]
    if not finite:
        return ""
    low, high = min(finite), max(finite)
    span = high - low
    return "".join(
        " "
        if not math.isfinite(v)
        else SPARKS[0 if span <= 0 else min(len(SPARKS) - 1, int((v - low) / span * len(SPARKS)))]
        for v in values
    )


def binned(values, width=SPARK_WIDTH) -> tuple[list, int]:
    """(values, runs per mark): at most `width` values, each the median of a
    bin of consecutive runs, so a long series fits a terminal's line."""
    per = max(1, -(-len(values) // width))
    if per == 1:
        return list(values), 1
    bins = [sorted(values[i : i + per]) for i in range(0, len(values), per)]
    return [b[len(b) // 2] for b in bins], per


def shown(n, changes, rows=ROWS) -> list[int]:
    """Indexes of the runs a table shows: the newest `rows` and the two runs
    around every change point; all of them when `rows` is 0."""
    if rows == 0 or n <= rows:
        return list(range(n))
    keep = set(range(n - rows, n))
    for c in changes:
        keep |= {c.index - 1, c.index}
    return sorted(keep)


def percent(x) -> str:
    return f"{100 * x:+.1f}%"


def _changed(differences) -> list[str]:
    if not differences:
        return ["    changed: nothing mpiscope records"]
    return ["    changed: " + d.text() for d in differences]


def series_text(trend, judgement=None, rows=ROWS) -> str:
    key, points = trend.series.key, trend.series.points
    f, name = scale(key.unit)
    marks = {c.index: c for c in trend.changes}
    table_rows, last = [], -1
    for i in shown(len(points), trend.changes, rows):
        if i > last + 1:
            table_rows.append([f"… {i - last - 1} run{'s' if i - last - 1 != 1 else ''}", "", "", "", ""])
        p, last = points[i], i
        table_rows.append(
            [
                p.run_id,
                p.created.replace("T", " ")[:16],
                sig(p.median * f),
                f"[{sig(p.ci_low * f)}, {sig(p.ci_high * f)}]",
                f"◀ {marks[i].step.direction} {percent(marks[i].step.step)}" if i in marks else "",
            ]
        )
    marks_of, per = binned([p.median for p in points])
    lines = [
        f"{key.name()}  ({key.where()}; {len(points)} run{'s' if len(points) != 1 else ''})",
        "  " + sparkline(marks_of) + (f"  (a mark: the median of {per} runs)" if per > 1 else ""),
        *(
            "  " + line
            for line in table(
                ["run", "created", f"median {name}", "95% CI", "change"], table_rows, [False, False, True, False, False]
            ).splitlines()
        ),
    ]
    for c in trend.changes:
        lines.append(
            f"  change from run {c.first_after.run_id} ({c.first_after.created[:10]}): {_step(c.step, key.unit)}"
        )
        lines += _changed(c.changed)
    if not trend.changes:
        lines.append("  no change point" if len(points) > 1 else "  one run: no change point")
    if judgement is not None:
        lines.append(judgement_text(judgement))
    return "\n".join(lines)


def _step(s, unit) -> str:
    f, name = scale(unit)
    return (
        f"{s.direction} by {100 * abs(s.step):.1f}% [{percent(s.low)}, {percent(s.high)}] "
        f"({sig(s.before.median * f)} → {sig(s.after.median * f)} {name}, "
        f"{s.before.runs} run{'s' if s.before.runs != 1 else ''} before, "
        f"{s.after.runs} after)"
    )


def judgement_text(j) -> str:
    if j.step is None:
        return f"  check: {j.status}"
    base = (
        f"baseline {j.baseline[0].run_id}"
        if len(j.baseline) == 1
        else f"baseline {len(j.baseline)} runs {j.baseline[0].run_id} … {j.baseline[-1].run_id}"
    )
    line = (
        f"  check: {j.status.upper() if j.status == 'regression' else j.status}: newest run "
        f"{j.newest.run_id} {_step(j.step, j.series.key.unit)} against the {base}"
    )
    if j.since is not None:
        line += f", slower since run {j.since.run_id}"
    if j.status == "regression":
        line += "\n" + "\n".join(_changed(j.changed))
    return line


def history_text(trends, judgements=None, threshold=0.02, rows=ROWS) -> str:
    by_key = {j.series.key: j for j in judgements or ()}
    blocks = [series_text(t, by_key.get(t.series.key), rows) for t in trends]
    foot = f"{len(trends)} series; a change is significant and beyond ±{100 * threshold:g}%"
    if judgements is not None:
        bad = [j for j in judgements if j.status == "regression"]
        foot += f"; check: {len(bad)} regression{'s' if len(bad) != 1 else ''} in the newest runs" + (
            ": " + ", ".join(f"{j.series.key.name()} ({j.series.key.where()})" for j in bad) if bad else ""
        )
    return "\n\n".join(blocks + [foot]) + "\n"


def history_json(trends, roots, threshold, judgements=None, baseline=None) -> str:
    by_key = {j.series.key: j for j in judgements or ()}
    series = []
    for t in trends:
        entry = {
            **t.series.key.to_dict(),
            "name": t.series.key.name(),
            "runs": [
                {
                    "run_id": p.run_id,
                    "created": p.created,
                    "label": p.label,
                    "path": p.path,
                    "median": p.median,
                    "ci_low": p.ci_low,
                    "ci_high": p.ci_high,
                    "n": p.n,
                }
                for p in t.series.points
            ],
            "changes": [c.to_dict() for c in t.changes],
        }
        if t.series.key in by_key:
            entry["check"] = by_key[t.series.key].to_dict()
        series.append(entry)
    doc = {"roots": [str(r) for r in roots], "threshold": threshold, "series": series}
    if judgements is not None:
        doc["check"] = {
            "baseline": None if baseline is None else str(baseline),
            "regressions": sum(j.status == "regression" for j in judgements),
        }
    return json_document("history", doc)
