# SPDX-License-Identifier: BSD-3-Clause
"""Crossovers of the lab's designs, per placement class and cache state: from
which size on one design beats another (at every larger size measured too), the
best design at every size, and how far the hybrid and MPI's own path are from it.

A challenger wins a size only where compare's test says it is faster
(stats/compare.py: Mann–Whitney p < 0.05 and the CI of the ratio of medians
beyond the ±2% noise band); a lower median alone is a coin toss, so the
incumbent keeps the size. Pairs: single copy (cma) over the better of two copies
(basic, advanced), pool over ring (advanced over basic); measured warm (tp_bw),
cold (tp_bw_cold), as latency (tp_latency) and with a late receiver (tp_skew)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mpiscope.stats.compare import DEFAULT_SEED, FASTER, compare_samples
from mpiscope.transport.curves import COPIES, DESIGNS, SINGLE, Curve, Lab

STATES = (("tp_bw", "warm"), ("tp_bw_cold", "cold"), ("tp_latency", "latency"), ("tp_skew", "late receiver"))


@dataclass
class Crossover:
    placement: str
    state: str  # warm, cold, latency, late receiver
    bench: str
    challenger: str  # "cma" or "advanced"
    incumbent: str  # "copy" (best of basic, advanced) or "basic"
    size: int | None  # the challenger wins from here on; None: never
    last_loss: int | None  # the largest size it still loses at
    always: bool = False  # wins at every size measured
    verdicts: dict = None  # size -> compare's verdict, challenger against incumbent

    def to_dict(self):
        return dict(vars(self))


def verdict_of(challenger: Curve, incumbent: Curve, size) -> str | None:
    """compare's verdict (faster, slower, same, insufficient) of the
    challenger against the incumbent at one size; None: not both measured."""
    a, b = incumbent.samples.get(size), challenger.samples.get(size)
    if a is None or b is None or not len(a) or not len(b) or not (np.median(a) > 0 and np.median(b) > 0):
        return None
    rng = np.random.default_rng(DEFAULT_SEED)  # the same verdict for the same samples, whatever came before
    return compare_samples(a, b, rng, higher_is_better=challenger.unit == "B/s")[2]


def _best_copy(lab, bench, cls, size) -> Curve | None:
    """The copy design (basic, advanced) with the lower median at this size."""
    cs = [c for a in COPIES if (c := lab.get(bench, cls, a)) and c.cost(size)]
    return min(cs, key=lambda c: c.cost(size)) if cs else None


def significant_wins(challenger: Curve, incumbent_at, sizes) -> tuple:
    """({size: won}, {size: verdict}) over the sizes both were measured at;
    `incumbent_at(size)`: the curve to beat there."""
    wins, verdicts = {}, {}
    for s in sizes:
        inc = incumbent_at(s)
        v = verdict_of(challenger, inc, s) if inc is not None else None
        if v is not None:
            verdicts[s], wins[s] = v, v == FASTER
    return wins, verdicts


def crossover(sizes, wins) -> tuple:
    """(first size of the final run of wins, last size lost before it); wins:
    size -> bool for the sizes both were measured at."""
    measured = [s for s in sizes if s in wins]
    if not measured or not wins[measured[-1]]:
        return None, (measured[-1] if measured else None)
    k = len(measured)
    while k > 0 and wins[measured[k - 1]]:
        k -= 1
    return measured[k], (measured[k - 1] if k > 0 else None)


def crossovers(lab: Lab) -> list:
    out = []
    for cls in lab.placements():
        for bench, state in STATES:
            sizes = lab.sizes(bench, cls)
            cma = lab.get(bench, cls, "cma")
            if cma and cma.medians:
                wins, verdicts = significant_wins(cma, lambda s: _best_copy(lab, bench, cls, s), sizes)
                first, last = crossover(sizes, wins)
                out.append(
                    Crossover(
                        cls,
                        state,
                        bench,
                        "cma",
                        "copy",
                        first,
                        last,
                        always=first is not None and last is None,
                        verdicts=verdicts,
                    )
                )
            basic, adv = lab.get(bench, cls, "basic"), lab.get(bench, cls, "advanced")
            if basic and adv and state in ("warm", "cold"):
                wins, verdicts = significant_wins(adv, lambda s: basic, sizes)
                first, last = crossover(sizes, wins)
                out.append(
                    Crossover(
                        cls,
                        state,
                        bench,
                        "advanced",
                        "basic",
                        first,
                        last,
                        always=first is not None and last is None,
                        verdicts=verdicts,
                    )
                )
    return out


@dataclass
class BestRow:
    placement: str
    bench: str
    size: int
    best: str  # the best single design here
    best_value: float  # its median (s or B/s)
    hybrid_ratio: float | None  # hybrid's cost / the best's (1.03: 3% slower)
    mpi_ratio: float | None  # MPI's own path's cost / the best's
    values: dict  # design -> median


def best_rows(lab: Lab, bench: str) -> list:
    rows = []
    for cls in lab.placements():
        for size in lab.sizes(bench, cls):
            costs = {a: c.cost(size) for a in SINGLE if (c := lab.get(bench, cls, a)) and c.cost(size)}
            if not costs:
                continue
            best = min(costs, key=costs.get)

            def ratio(algo):
                c = lab.get(bench, cls, algo)
                return c.cost(size) / costs[best] if c and c.cost(size) else None

            values = {
                a: c.medians[size] for a in (*DESIGNS, "mpi") if (c := lab.get(bench, cls, a)) and size in c.medians
            }
            rows.append(
                BestRow(
                    cls,
                    bench,
                    size,
                    best,
                    lab.get(bench, cls, best).medians[size],
                    ratio("hybrid"),
                    ratio("mpi"),
                    values,
                )
            )
    return rows


def overlap(lab: Lab) -> list:
    """tp_overlap per class, design, size: the share of the computation the
    send hid, (alone + compute - total) / compute, from the params the
    engine recorded (the send alone, the computation's actual length)."""
    rows = []
    for (bench, cls, algo), c in sorted(lab.curves.items()):
        if bench != "tp_overlap":
            continue
        for size, total in sorted(c.medians.items()):
            p = c.params.get(size, {})
            alone, compute = p.get("compute_s"), p.get("compute_actual_s")
            if alone and compute:
                rows.append(
                    {
                        "placement": cls,
                        "design": algo,
                        "size": size,
                        "alone_s": alone,
                        "compute_s": compute,
                        "total_s": total,
                        "overlap": (alone + compute - total) / compute,
                    }
                )
    return rows


def library_crossovers(lab: Lab, placement) -> dict:
    """{family: (first, last_loss)}: from which size an MPI library's own
    single-copy path beats its copy path, for the families measured both ways
    (transport/paths.py). Single copy is what these libraries do by default,
    so it keeps a size unless copying wins there significantly in every
    benchmark measured at it (lib_bw, lib_latency): a setting away from the
    defaults needs a significant win, never a lower median alone."""
    from mpiscope.transport.paths import COPY, SINGLE

    bw, lat = lab.library_paths("lib_bw", placement), lab.library_paths("lib_latency", placement)
    out = {}
    for fam in sorted({f for f, _ in bw} | {f for f, _ in lat}):
        wins = {}
        for paths in (bw, lat):
            single, copy = paths.get((fam, SINGLE)), paths.get((fam, COPY))
            if single is None or copy is None:
                continue
            for s in set(single.medians) & set(copy.medians):
                v = verdict_of(copy, single, s)
                wins[s] = wins.get(s, False) or v != FASTER
        if wins:
            out[fam] = crossover(sorted(wins), wins)
    return out
