# SPDX-License-Identifier: BSD-3-Clause
"""Selection rules from measured cells: per collective and communicator size, a
list of (first library size, algorithm) (mpilibs/selection.py), adjacent rules
with the same algorithm merged; a change-over between two measured sizes goes at
their geometric mean (the sizes are a geometric grid).

A bound on the number of rules merges the rule whose loss is smallest into a
neighbour and states the cost (the neighbour's slowdown at each size it moves).
The loss is the sum of log slowdowns; with an application's weights (--weights)
first the time it loses, Σ calls × (median kept − median of the winner), so the
bound gives way where the application does not call."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.selection import Rule, check, chosen


@dataclass(frozen=True)
class Point:
    size: int  # library size of a measured cell
    winner: str  # algorithm name or DEFAULT
    medians: dict = field(default_factory=dict, compare=False, hash=False)  # algorithm -> median (s)
    calls: float | None = field(default=None, compare=False, hash=False)  # the application's, or None


def merged(rules: list) -> list:
    out = []
    for r in rules:
        if not out or out[-1].algorithm != r.algorithm:
            out.append(r)
    return out


def boundary(lo: int, hi: int) -> int:
    """Where a change-over between measured sizes lo < hi goes: their geometric mean."""
    return max(lo + 1, int(round(math.sqrt(max(lo, 1) * hi))))


def from_points(points: list) -> list:
    """Rules from measured cells (any order): compacted, first at 0."""
    pts = sorted(points, key=lambda p: p.size)
    rules = [Rule(0, pts[0].winner)]
    for a, b in zip(pts, pts[1:]):
        if b.winner != rules[-1].algorithm:
            rules.append(Rule(boundary(a.size, b.size), b.winner))
    return merged(rules)


def _slowdowns(points, rules):
    """{size: slowdown of the chosen algorithm against the winner} (1 = none)."""
    out = {}
    for p in points:
        alg = chosen(rules, p.size)
        if alg == p.winner:
            out[p.size] = 1.0
        else:
            a, w = p.medians.get(alg), p.medians.get(p.winner)
            out[p.size] = a / w if a and w else math.inf
    return out


def _application_s(points, rules):
    """{size: seconds the application loses there}, or {} without weights."""
    out = {}
    for p in points:
        if p.calls is None:
            return {}
        alg = chosen(rules, p.size)
        a, w = p.medians.get(alg), p.medians.get(p.winner)
        out[p.size] = 0.0 if alg == p.winner else (p.calls * (a - w) if a and w else (math.inf if p.calls else 0.0))
    return out


def bounded(points: list, max_rules: int):
    """Rules from `points` with at most `max_rules` rules. Returns (rules,
    cost): cost lists (size, slowdown, application seconds or None) for each
    measured size the bound moved to another algorithm, slowdown = that
    algorithm's median / the winner's."""
    if max_rules < 1:
        raise UsageError(f"--max-rules must be at least 1, got {max_rules}")
    rules = from_points(points)
    while len(rules) > max_rules:
        best = None
        for i in range(len(rules)):
            for j in (i - 1, i + 1):
                if not 0 <= j < len(rules):
                    continue
                trial = [r if k != i else Rule(r.start, rules[j].algorithm) for k, r in enumerate(rules)]
                trial = merged(trial)
                if trial[0].start != 0:
                    trial[0] = Rule(0, trial[0].algorithm)
                loss = (
                    sum(_application_s(points, trial).values()),
                    sum(math.log(s) for s in _slowdowns(points, trial).values()),
                )
                if best is None or loss < best[0]:
                    best = (loss, trial)
        rules = best[1]
    app = _application_s(points, rules)
    cost = [(size, s, app.get(size)) for size, s in sorted(_slowdowns(points, rules).items()) if s != 1.0]
    return check(rules, "rules"), cost
