# SPDX-License-Identifier: BSD-3-Clause
"""One series' history: its runs' medians, its change points, and for each
the runs on either side and what differed between them."""

from __future__ import annotations

from dataclasses import dataclass, field

from mpiscope.history.changes import Difference, differences
from mpiscope.history.detect import Step, change_points
from mpiscope.history.points import Point
from mpiscope.history.series import Series


@dataclass(frozen=True)
class ChangePoint:
    index: int  # of the first run after the change, in the series
    first_after: Point
    last_before: Point
    step: Step
    changed: tuple = ()  # Differences between last_before's and first_after's contexts

    def to_dict(self) -> dict:
        return {
            "index": self.index,
            "first_after": self.first_after.run_id,
            "first_after_created": self.first_after.created,
            "last_before": self.last_before.run_id,
            **self.step.to_dict(),
            "changed": [d.to_dict() for d in self.changed],
        }


@dataclass
class Trend:
    series: Series
    changes: list = field(default_factory=list)  # ChangePoints, oldest first


def changes_of(points, unit, threshold) -> list[ChangePoint]:
    found = change_points(
        [p.median for p in points], [p.ci_low for p in points], [p.ci_high for p in points], unit, threshold
    )
    return [ChangePoint(i, points[i], points[i - 1], s, tuple(changed(points[i - 1], points[i]))) for i, s in found]


def changed(before: Point, after: Point) -> list[Difference]:
    return differences(before.context, after.context)


def trend(series: Series, threshold) -> Trend:
    return Trend(series, changes_of(series.points, series.key.unit, threshold))
