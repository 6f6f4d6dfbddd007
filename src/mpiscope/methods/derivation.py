# SPDX-License-Identifier: BSD-3-Clause
"""What every tool's derivation returns, and the steps they share.

A tool's module (osu.py, imb.py, skampi.py, mpptest.py, mpibench.py)
computes from one stored method series the number the tool prints, exactly
as the tool computes it, and then re-reads the same rows the way mpiscope
reads its own, one difference of method at a time: each `Step` is the value
after one change (its statistic, which ranks count, where a repetition
starts). The last step's value is the tool's own data read mpiscope's way;
attribution.py compares it with mpiscope's median.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mpiscope.methods.stored import Grid, MethodSeries


@dataclass
class Step:
    cause: str  # statistic, ranks, barrier, overlap, definition (attribution.CAUSES)
    what: str  # the change, in a few words
    value: float  # the number after the change, in the derivation's unit


@dataclass
class Derivation:
    """A tool's number for one series, and the same-data steps toward
    mpiscope's reading of it. `unit` is "s" or "B/s"; `printed` holds the
    columns the tool prints, in its own units; `differs` says why the
    number is another quantity than mpiscope's (then the difference is one
    of definition)."""

    series: MethodSeries
    unit: str
    number: float
    printed: dict
    n: int
    steps: list = field(default_factory=list)
    differs: str | None = None

    @property
    def reading(self) -> float:
        """The tool's data read mpiscope's way (the last step)."""
        return self.steps[-1].value if self.steps else self.number


def median(values) -> float:
    return float(np.median(values)) if len(values) else float("nan")


def common_start(g: Grid, calls=None) -> np.ndarray:
    """Per repetition, the slowest rank timed from the last rank's start: the
    latest end minus the latest start on the global clock (per call when
    `calls` divides loops)."""
    span = g.end.max(axis=0) - g.start.max(axis=0)
    return span / calls if calls is not None else span


def start_cause(start: str) -> str:
    """Per-rank starts differ by a barrier's exit skew, or by the previous
    call's end when calls run back to back."""
    return "barrier" if start.startswith("barrier") else "overlap"


def rank_mean_steps(s: MethodSeries, g: Grid) -> list:
    """Steps of a number that is the mean over ranks of each rank's mean over
    its calls (OSU's average, IMB's t_avg): the median over calls, the
    slowest rank, the last rank's start."""
    d = g.durations
    return [
        Step("statistic", "mean over the calls → median", median(d.mean(axis=0))),
        Step("ranks", "mean over the ranks → the slowest rank", median(d.max(axis=0))),
        Step(
            start_cause(s.start),
            "each rank timed from its own start → from the last rank's start",
            median(common_start(g)),
        ),
    ]


def rank_means(g: Grid) -> np.ndarray:
    """Each rank's mean time per call."""
    return (g.durations / g.calls).mean(axis=1)


def us(seconds) -> float:
    return float(seconds) * 1e6
