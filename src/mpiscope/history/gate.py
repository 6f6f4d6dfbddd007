# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope history --check`: is the newest run of a series a significant
regression beyond the threshold against its baseline? By default the baseline
is the series' last segment before the newest run; while the newest run is in
a segment that began with a slower change point, or follows slower nights no
change point shows yet, it stays the runs before the first slower night, so a
regression fails the gate every night until the level comes back or a later
--baseline (RUN: one run; DATE: the runs from then on) accepts it. The test is
detect.py's: the step's interval holds no change and exceeds the threshold."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from mpiscope.common.errors import UsageError
from mpiscope.history.detect import SLOWER, Level, Step, level, step
from mpiscope.history.points import Point, timestamp
from mpiscope.history.series import Series
from mpiscope.history.trend import changed, changes_of

REGRESSION_EXIT = 5  # the exit code of `history --check` that found a regression (docs/reference/exit-codes.md)
REGRESSION, FASTER, SAME, ALONE = "regression", "faster", "same", "one run"


@dataclass(frozen=True)
class Judgement:
    series: Series
    status: str  # regression, faster, same, or "one run" (nothing to compare)
    newest: Point
    baseline: tuple = ()  # the baseline's Points
    step: Step | None = None
    changed: tuple = ()  # Differences from the last baseline run to the newest
    since: Point | None = None  # the first run of the slower segment the newest run is in

    def to_dict(self) -> dict:
        return {
            "status": self.status,
            "newest": self.newest.run_id,
            "baseline": [p.run_id for p in self.baseline],
            "since": self.since.run_id if self.since else None,
            **(self.step.to_dict() if self.step else {}),
            "changed": [d.to_dict() for d in self.changed],
        }


def parse_baseline(text):
    """A date (YYYY-MM-DD, or with a time) or a run's id, prefix or label."""
    text = str(text).strip()
    when = timestamp(text) if re.match(r"^\d{4}-\d{2}-\d{2}", text) else datetime.min
    return when if when != datetime.min else text


def _baseline(series: Series, baseline, threshold) -> tuple[list[Point], Point | None]:
    """(the baseline's points, the first run of the slower segment the newest
    run is in when the baseline is the segment before it)."""
    if baseline is None:
        return _default_baseline(series, threshold)
    return _chosen_baseline(series, baseline), None


def _default_baseline(series: Series, threshold) -> tuple[list[Point], Point | None]:
    points, unit = series.points, series.key.unit
    cuts = changes_of(points, unit, threshold)
    if cuts and cuts[-1].step.direction == SLOWER:  # the newest run is in a slower segment
        start = cuts[-2].index if len(cuts) > 1 else 0
        return points[start : cuts[-1].index], cuts[-1].first_after
    slow = _slow_nights(points, unit, threshold)
    if slow is not None:
        return slow
    before = points[:-1]
    return (before[cuts[-1].index :] if cuts else before), None


WALK_BACK = 5  # nights of a slow stretch no change point shows yet (a median of ≤ 5 runs spans them all)


def _slow_nights(points, unit, threshold) -> tuple[list[Point], Point] | None:
    """(the baseline before them, the first of them) of the nights just before the
    newest that were each slower than the runs before them beyond the threshold,
    when no change point shows them yet (too few, or too spread to make a
    segment that passes); None when the night before the newest was not."""
    found = None
    for start in range(len(points) - 2, max(len(points) - 2 - WALK_BACK, 1), -1):
        earlier = points[:start]
        cuts = changes_of(earlier, unit, threshold)
        base = earlier[cuts[-1].index :] if cuts else earlier
        before = _level(base)
        if not all(_slower(before, p, unit, threshold) for p in points[start:-1]):
            break
        found = base, points[start]
    return found


def _level(points) -> Level:
    return level([p.median for p in points], [p.ci_low for p in points], [p.ci_high for p in points])


def _slower(before: Level, p: Point, unit, threshold) -> bool:
    s = step(before, _level([p]), unit)
    return s.beyond(threshold) and s.direction == SLOWER


def _chosen_baseline(series: Series, baseline) -> list[Point]:
    before = series.points[:-1]
    if isinstance(baseline, datetime):
        chosen = [p for p in before if p.when >= baseline]
        if not chosen:
            raise UsageError(
                f"--baseline {baseline:%Y-%m-%d %H:%M}: series {series.key.name()} "
                f"({series.key.where()}) has no run from then on before its newest; "
                "give an earlier date, or narrow the series with --where"
            )
        return chosen
    chosen = _named(before, baseline) or _named([series.points[-1]], baseline)
    if not chosen:
        raise UsageError(
            f"--baseline {baseline}: no run of series {series.key.name()} "
            f"({series.key.where()}) has that id, id prefix or label; `mpiscope "
            "history` lists each series' runs, or narrow the series with --where"
        )
    if chosen[0] is series.points[-1]:
        raise UsageError(
            f"--baseline {baseline} is the newest run of series {series.key.name()}: "
            "give an earlier run to compare it with"
        )
    return chosen[-1:]


def _named(points, ref) -> list[Point]:
    exact = [p for p in points if p.run_id == ref or p.label == ref]
    return exact or [p for p in points if p.run_id.startswith(ref)]


def judge(series: Series, threshold, baseline=None) -> Judgement:
    newest = series.points[-1]
    if len(series.points) < 2:
        return Judgement(series, ALONE, newest)
    base, since = _baseline(series, baseline, threshold)
    s = step(_level(base), _level([newest]), series.key.unit)
    status = SAME if not s.beyond(threshold) else REGRESSION if s.direction == SLOWER else FASTER
    return Judgement(
        series,
        status,
        newest,
        tuple(base),
        s,
        tuple(changed(base[-1], newest)),
        since if status == REGRESSION else None,
    )


def check(series_list, threshold, baseline=None) -> list[Judgement]:
    """Every series judged; UsageError when no series has two runs to compare."""
    judged = [judge(s, threshold, baseline) for s in series_list]
    if all(j.status == ALONE for j in judged):
        raise UsageError(
            "every selected series has one run: --check compares a series' newest run "
            "with the runs before it; select series with two runs or more"
        )
    return judged
