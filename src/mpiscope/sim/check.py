# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope sim check`: every algorithm × size of our own collectives in a
run, measured against simulated, with the costs taken from the same run's
point-to-point data (the Hockney fit of its pingpong, or per-message times
drawn from its pingpong distributions)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

from mpiscope.common.errors import UsageError
from mpiscope.models.costmodels import COLLECTIVES, find
from mpiscope.models.costmodels.check import MeasuredCell
from mpiscope.sim.costs import SimCosts
from mpiscope.sim.simulate import Extras, algorithm
from mpiscope.store.ingest import load
from mpiscope.stats.summary import median_ci
from mpiscope.store.series import all_series_samples

BOUND = 0.15  # the validation's bound on the simulated median's error


@dataclass
class CheckRow(MeasuredCell):
    simulated: float
    low: float
    high: float
    measured_low: float = float("nan")  # 95% CI of the measured median
    measured_high: float = float("nan")

    @property
    def error(self) -> float | None:
        return (self.simulated - self.measured) / self.measured if self.measured > 0 else None

    @property
    def cause(self) -> str | None:
        """Why the cell misses BOUND, None when it does not: the measured
        median itself is unsure by more than BOUND (its CI reaches beyond),
        or the simulation is high or low."""
        if self.error is None or abs(self.error) <= BOUND:
            return None
        if self.measured_high > self.measured * (1 + BOUND) or self.measured_low < self.measured * (1 - BOUND):
            return "measured median unsure"
        return "simulated high" if self.error > 0 else "simulated low"

    def to_dict(self):
        return {
            "bench": self.bench,
            "algo": self.algo,
            "size": self.size,
            "n": self.n,
            "measured_s": self.measured,
            "simulated_s": self.simulated,
            "low_s": self.low,
            "high_s": self.high,
            "rel_error": self.error,
            "measured_ci_s": [self.measured_low, self.measured_high],
            "cause": self.cause,
        }


@dataclass
class SimCheck:
    run_id: str
    p: int
    costs: SimCosts
    sampled: bool
    rows: list = field(default_factory=list)
    exchange: bool = False  # exchange messages charged the measured exchange's difference

    def within(self, bound: float) -> float:
        """Share of cells whose simulated median is within `bound` of measured."""
        errs = [abs(r.error) for r in self.rows if r.error is not None]
        return float(np.mean([e <= bound for e in errs])) if errs else float("nan")

    def rankings(self) -> list[dict]:
        """Per collective and size: Kendall τ between measured and simulated order."""
        groups = {}
        for r in self.rows:
            groups.setdefault((r.bench, r.size), []).append(r)
        out = []
        for (bench, size), rows in sorted(groups.items()):
            if len(rows) < 2:
                continue
            tau = kendalltau([r.measured for r in rows], [r.simulated for r in rows]).statistic
            ordered, alike = ordered_pairs(rows)
            out.append(
                {
                    "bench": bench,
                    "size": size,
                    "algos": len(rows),
                    "kendall_tau": None if np.isnan(tau) else float(tau),
                    "best_measured": min(rows, key=lambda r: r.measured).algo,
                    "best_simulated": min(rows, key=lambda r: r.simulated).algo,
                    "ordered_pairs": ordered,
                    "ordered_alike": alike,
                }
            )
        return out

    def to_dict(self):
        return {
            "run_id": self.run_id,
            "p": self.p,
            "costs": self.costs.to_dict(),
            "sampled": self.sampled,
            "exchange": self.exchange,
            "rows": [r.to_dict() for r in self.rows],
            "within_15pct": self.within(BOUND),
            "rankings": self.rankings(),
        }


def ordered_pairs(rows) -> tuple[int, int]:
    """(pairs of algorithms the measurement orders, of those how many the
    simulation orders alike): two are ordered when their measured medians'
    95% intervals do not overlap; closer ones are a tie Kendall's τ still
    counts either way."""
    ordered = alike = 0
    for a, b in itertools.combinations(rows, 2):
        if a.measured_high < b.measured_low or b.measured_high < a.measured_low:
            ordered += 1
            alike += (a.measured < b.measured) == (a.simulated < b.simulated)
    return ordered, alike


def check_run(run_dir, costs: SimCosts, extras: Extras, bench=None) -> SimCheck:
    run_dir = Path(run_dir)
    table, run = load(run_dir)
    p = int(run.np or 0)
    series = [
        (b, a, s, smp)
        for b, a, s, smp in all_series_samples(table, run)
        if b in COLLECTIVES and find(b, a) is not None and (bench is None or b == bench) and len(smp.values)
    ]
    if not series:
        what = f"benchmark '{bench}'" if bench else "any collective"
        raise UsageError(
            f"run {run.run_id} has no measurement of our own algorithms for {what}: "
            "measure with mpiscope run --bench B --algo all"
        )
    segment = run.plan.get("segment")
    if segment:
        from dataclasses import replace

        costs = replace(costs, segment=int(segment))
    out = SimCheck(
        run.run_id,
        p,
        costs,
        extras.dist is not None,
        exchange=extras.exchange is not None,
    )
    for b, a, size, smp in series:
        ans = algorithm(b, a, p, int(size), costs, extras)
        out.rows.append(
            CheckRow(
                b,
                a,
                int(size),
                len(smp.values),
                float(np.median(smp.values)),
                ans.median,
                ans.low,
                ans.high,
                *median_ci(smp.values),
            )
        )
    return out
