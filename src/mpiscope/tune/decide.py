# SPDX-License-Identifier: BSD-3-Clause
"""Which algorithm a cell gets: one replaces the library's default only when
`judge` finds it faster, each of the k algorithms the library offers tested
at alpha / k (k counts those the search left out too, so the same launches
give an exhaustive tune's winners); among those, the smallest median wins.
`judge` takes the launch as the unit (stats/launch_compare.py, the launch
variance floored by the pair's and the default's at the cell only) when both
sides have two launches or more, and compare's pooled test otherwise.
Decisions holds one communicator size's. Method: docs/explanation/tuner.md,
"Deciding with the launch as the unit"."""

from __future__ import annotations

import numpy as np

from mpiscope.stats.compare import FASTER, INSUFFICIENT, compare_samples
from mpiscope.stats.launch_compare import compare_launches
from mpiscope.mpilibs.algorithm_catalog import DEFAULT

LAUNCH, SAMPLE = "launch", "sample"  # the unit a verdict was reached with


def judge(
    samples, coll: str, size: int, a: str, b: str, rng, noise: float, alpha: float, n_boot: int = 1000, pool=None
):
    """(ratio Estimate B / A, p, verdict of B against A, unit). `pool`: the
    groups whose typical launch variance is the floor (default: A's, B's and
    the library default's launches at the cell)."""
    la, lb = samples.launches(coll, a, size), samples.launches(coll, b, size)
    if len(la) >= 2 and len(lb) >= 2:
        if pool is None:
            pool = [samples.launches(coll, n, size) for n in dict.fromkeys((a, b, DEFAULT))]
        v = compare_launches(la, lb, pool, noise=noise, alpha=alpha)
        if v.verdict != INSUFFICIENT:  # (launches whose median is 0 do not count)
            return v.ratio, v.p_value, v.verdict, LAUNCH
    ratio, p, verdict, _ = compare_samples(
        np.concatenate(la), np.concatenate(lb), rng, noise=noise, alpha=alpha, n_boot=n_boot
    )
    return ratio, p, verdict, SAMPLE


def decide(
    samples,
    coll: str,
    size: int,
    names: list,
    rng,
    noise: float,
    alpha: float,
    n_boot: int = 1000,
    family: int | None = None,
):
    """(winner, rows): rows per algorithm measured with its median, launches,
    the ratio of its median to the default's with CI, p, verdict and unit.
    `family`: k, the algorithms other than the default in the race (default:
    those of `names` measured here)."""
    base = samples.get(coll, DEFAULT, size)
    rows, candidates = [], []
    # Each algorithm is tested against the default: Bonferroni over them, so
    # that the chance of any false winner at the cell stays within alpha.
    measured = sum(1 for n in names if n != DEFAULT and len(samples.get(coll, n, size)))
    tested = alpha / max(1, measured if family is None else max(family, measured))
    base_med = float(np.median(base)) if len(base) else None
    for name in names:
        vals = samples.get(coll, name, size)
        if not len(vals):
            continue
        row = {
            "algorithm": name,
            "n": int(len(vals)),
            "median_s": float(np.median(vals)),
            "launches": len(samples.launches(coll, name, size)),
        }
        if name != DEFAULT and len(base) and base_med and row["median_s"] > 0:
            ratio, p, verdict, unit = judge(samples, coll, size, DEFAULT, name, rng, noise, tested, n_boot)
            row.update(
                ratio=ratio.point, ratio_low=ratio.low, ratio_high=ratio.high, p_value=p, verdict=verdict, unit=unit
            )
            if verdict == FASTER:
                candidates.append(row)
        rows.append(row)
    if not len(base):
        return None, rows  # without the default measured nothing may replace it
    winner = min(candidates, key=lambda r: r["median_s"])["algorithm"] if candidates else DEFAULT
    return winner, rows


class Decisions:
    """The winner of each cell of one communicator size {(coll, size): name
    or DEFAULT} (a size between measured ones may inherit its neighbour's,
    tune/adaptive.py), and the rows of the cells decided by measurement."""

    def __init__(self, measured, rng, noise: float, alpha: float):
        self.measured, self.rng, self.noise, self.alpha = measured, rng, noise, alpha
        self.winners, self.rows = {}, {}
        self.withdrawn = []  # rules the verification withdrew: {collective, size, algorithm, speedup}

    def decide(self, coll, size) -> str:
        """The cell decided on what `measured` holds there; k counts every
        algorithm of the collective (the family of its tests)."""
        m = self.measured
        names = [n for n in m.names[coll] if (size, n) in m.cells[coll]]
        winner, rows = decide(
            m.samples, coll, size, names, self.rng, self.noise, self.alpha, family=len(m.names[coll]) - 1
        )
        for r in rows:
            if (size, r["algorithm"]) in m.inferred[coll]:
                r["launches_of"] = m.launches_of[(coll, size, r["algorithm"])]
        self.winners[(coll, size)], self.rows[(coll, size)] = winner or DEFAULT, rows
        return winner or DEFAULT

    def of(self, coll) -> dict:
        """{size: winner} of one collective."""
        return {s: w for (c, s), w in self.winners.items() if c == coll}

    def withdraw(self, cells) -> bool:
        """Rules of verified cells where tuned is slower beyond noise go back to
        the default; whether any did."""
        slower = [r for r in cells if r.get("verdict") == "tuned slower" and r["rule"] != DEFAULT]
        for r in slower:
            self.winners[(r["collective"], r["size"])] = DEFAULT
            self.withdrawn.append(
                {"collective": r["collective"], "size": r["size"], "algorithm": r["rule"], "speedup": r["speedup"]}
            )
        return bool(slower)
