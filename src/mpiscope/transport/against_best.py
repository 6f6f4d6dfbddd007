# SPDX-License-Identifier: BSD-3-Clause
"""Whether the hybrid is within 3% of the best single design, per size,
judged with compare's noise treatment rather than by a bare ratio of
medians, which noise alone can move by that much. Per benchmark × size, the
repeats pooled: the best single design (lowest median), the ratio hybrid /
best with compare's interval and verdict, and the margin: within (the whole
interval at or below 1.03), beyond (above it) or undecided (straddling it,
the runs judged alone disagreeing, or too few samples for a verdict)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mpiscope.stats.compare import DEFAULT_SEED, INSUFFICIENT, SAME, compare_samples
from mpiscope.transport.curves import SINGLE, Lab, lab_of

MARGIN = 0.03
WITHIN, BEYOND, UNDECIDED = "within", "beyond", "undecided"


@dataclass(frozen=True)
class AgainstBest:
    placement: str
    bench: str
    size: int
    best: str
    ratio: float  # hybrid cost / best cost (1.03: 3% slower)
    low: float  # its 95% bootstrap CI
    high: float
    p_value: float
    verdict: str  # compare's, hybrid against the best: same / slower / faster / insufficient
    margin: str  # within / beyond / undecided
    rounds: tuple = ()  # each run's own point ratio

    def to_dict(self) -> dict:
        return dict(vars(self))


def _cost_ratio(best, hybrid, unit):
    """(ratio, low, high, p, verdict) of the hybrid's cost over the best's."""
    rng = np.random.default_rng(DEFAULT_SEED)
    bw = unit == "B/s"
    r, p, v, _ = compare_samples(best, hybrid, rng, higher_is_better=bw)
    if bw:  # stored values are bandwidths: a cost is their inverse, and so is the interval
        return 1 / r.point, 1 / r.high, 1 / r.low, p, v
    return r.point, r.low, r.high, p, v


def margin_of(low: float, high: float, rounds=(), margin: float = MARGIN, verdict: str = SAME) -> str:
    """within / beyond / undecided; with too few samples for compare's
    verdict ("insufficient") nothing is claimed, however narrow the CI."""
    if verdict == INSUFFICIENT:
        return UNDECIDED
    limit = 1 + margin
    if high <= limit and all(x <= limit for x in rounds):
        return WITHIN
    if low > limit and all(x > limit for x in rounds):
        return BEYOND
    return UNDECIDED


def against_best(run_dirs, benches=("tp_latency", "tp_bw"), margin: float = MARGIN) -> list:
    """[AgainstBest] of stored runs: pooled, and each run alone for the rounds."""
    alone = [lab_of([d]) for d in run_dirs] if len(run_dirs) > 1 else []
    return judge_labs(lab_of(run_dirs), alone, benches, margin)


def judge_labs(pooled: Lab, alone=(), benches=("tp_latency", "tp_bw"), margin: float = MARGIN) -> list:
    rows = []
    for cls in pooled.placements():
        for bench in benches:
            hybrid = pooled.get(bench, cls, "hybrid")
            if hybrid is None:
                continue
            for size in pooled.sizes(bench, cls):
                cands = [c for a in SINGLE if (c := pooled.get(bench, cls, a)) and c.cost(size)]
                if not cands or not hybrid.cost(size):
                    continue
                best = min(cands, key=lambda c: c.cost(size))
                ratio, lo, hi, p, v = _cost_ratio(best.samples[size], hybrid.samples[size], hybrid.unit)
                seen = []
                for lab in alone:
                    b, h = lab.get(bench, cls, best.algo), lab.get(bench, cls, "hybrid")
                    if b and h and b.cost(size) and h.cost(size):
                        seen.append(h.cost(size) / b.cost(size))
                rows.append(
                    AgainstBest(
                        cls,
                        bench,
                        size,
                        best.algo,
                        ratio,
                        lo,
                        hi,
                        p,
                        v,
                        margin_of(lo, hi, seen, margin, v),
                        tuple(seen),
                    )
                )
    return rows


def tally(rows) -> dict:
    """{(placement, bench): {sizes, within, beyond, undecided, indistinguishable}}."""
    out = {}
    for r in rows:
        t = out.setdefault(
            (r.placement, r.bench), {"sizes": 0, WITHIN: 0, BEYOND: 0, UNDECIDED: 0, "indistinguishable": 0}
        )
        t["sizes"] += 1
        t[r.margin] += 1
        t["indistinguishable"] += r.verdict == SAME
    return out
