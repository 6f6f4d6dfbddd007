# SPDX-License-Identifier: BSD-3-Clause
"""The difference between a tool's number and mpiscope's median, split into
measured causes that add up to it: one thing changed at a time, in a fixed
order, first on the tool's own rows (derivation.py, exact: definition,
statistic, ranks, barrier), then between two reference series that differ in
one respect (reference.py: statistic, overlap, cache, root rotation,
barrier), and what is left is unexplained. Each term is a difference of two
numbers in the tool's unit. Method: docs/explanation/peer-methods.md,
"Splitting the difference"."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mpiscope.methods import reference as ref
from mpiscope.methods.derivation import Derivation

# The causes, in the order the chain takes them (the `what` of each term says
# exactly what changed).
CAUSES = {
    "definition": "the tool's number is another quantity (a whole round trip; a ping-pong's bandwidth)",
    "statistic": "the tool's statistic (mean, trimmed mean, minimum of loop means) against the median: the tail",
    "ranks": "whose time counts (the mean over ranks, rank 0, the root) against the slowest rank",
    "barrier": "a barrier before each repetition: its exit skew inside each rank's timing, and a "
    "barrier start against mpiscope's synchronized one",
    "overlap": "repetitions back to back, each starting while the last one ends, against synchronized ones",
    "cache": "fresh memory every repetition against the same buffers",
    "root_rotation": "the root rotating every call against a fixed root",
    "unexplained": "what no measured cause accounts for: the tool's rows against mpiscope's reference "
    "series under the same conditions (noise between series, what differs unmeasured)",
}


@dataclass
class Term:
    cause: str
    what: str
    value: float  # in the number's unit; positive: the tool's number is larger by this


@dataclass
class Attribution:
    """A tool's number beside mpiscope's median, and the terms of the difference."""

    derivation: Derivation
    median: float
    ci: tuple
    terms: list = field(default_factory=list)

    @property
    def difference(self) -> float:
        return self.derivation.number - self.median

    def by_cause(self) -> dict:
        """{cause: sum of its terms}, in CAUSES order, causes without terms left out."""
        out = {}
        for t in self.terms:
            out[t.cause] = out.get(t.cause, 0.0) + t.value
        return {c: out[c] for c in CAUSES if c in out}


def _median(values) -> float:
    return float(np.median(values)) if len(values) else float("nan")


def _loop_means(times: np.ndarray, calls: int) -> np.ndarray:
    """The back-to-back reference's calls cut into consecutive loops of
    `calls`, each loop's mean (all of them as one loop when fewer)."""
    k = max(1, len(times) // max(1, calls))
    return times[: k * (len(times) // k)].reshape(k, -1).mean(axis=1)


def _between(d: Derivation, refs: dict, median: float) -> list:
    """The terms measured between reference series (2 above)."""
    s, unit = d.series, ref.in_unit(d.series.bench, d.series.size)
    have = {name: v for name, v in refs.items() if v is not None and len(v)}
    if ref.BARRIER not in have:
        return []
    q = lambda name: unit(_median(have[name]))  # noqa: E731
    terms = []
    if s.timing == "loop" and ref.B2B in have:
        loops = _loop_means(have[ref.B2B], int(s.params.get("n_avg") or s.params.get("repetitions") or 1))
        terms.append(
            Term(
                "statistic",
                "a loop's time is the mean of its calls: back-to-back loops of as "
                "many calls, their median → the median call",
                unit(_median(loops)) - q(ref.B2B),
            )
        )
    if s.start == "back_to_back" and ref.B2B in have:
        terms.append(
            Term("overlap", "the reference back to back → with a barrier before each call", q(ref.B2B) - q(ref.BARRIER))
        )
    if s.entry.get("cache") == "cycling" and ref.CYCLE in have:
        terms.append(
            Term("cache", "fresh memory every call → the same buffers (the references)", q(ref.CYCLE) - q(ref.BARRIER))
        )
    if s.entry.get("root") == "rotating" and ref.ROTATE in have and ref.B2B in have:
        terms.append(
            Term(
                "root_rotation", "the root rotating → root 0 (the references, back to back)", q(ref.ROTATE) - q(ref.B2B)
            )
        )
    if s.start != "slot":
        terms.append(
            Term(
                "barrier",
                "a barrier before each call, timed from the last rank's start → mpiscope's synchronized start",
                q(ref.BARRIER) - median,
            )
        )
    return terms


def attribute(d: Derivation, refs: dict, median: float, ci=(float("nan"), float("nan"))) -> Attribution:
    """The terms of `d.number − median`; `refs`: {reference method: its call
    times (reference.call_times)} measured beside the tool's series."""
    terms, before = [], d.number
    for step in d.steps:
        terms.append(Term(step.cause, step.what, before - step.value))
        before = step.value
    if d.differs:
        terms.append(Term("definition", d.differs, before - median))
        return Attribution(d, median, ci, terms)
    between = _between(d, refs, median)
    rest = before - median - sum(t.value for t in between)
    terms += between + [
        Term("unexplained", "the tool's data read mpiscope's way → mpiscope's median, less the terms above", rest)
    ]
    return Attribution(d, median, ci, terms)
