# SPDX-License-Identifier: BSD-3-Clause
"""One simulation request: a schedule (a file, or one of our algorithms
generated on the fly), costs, replicates; the answer is the median of the
replicates' finish times with a prediction interval."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mpiscope.common.errors import UsageError
from mpiscope.models.costmodels import predict_time
from mpiscope.models.costmodels.base import Costs
from mpiscope.sim import binary
from mpiscope.sim.costs import SimCosts
from mpiscope.sim.measured import write_dist, write_exchange

# Schedules beyond this many operations (~60 bytes each held) are not simulated
# whole: one rank stands for all when the ranks are symmetric, else the cost model answers.
MAX_OPS = 100_000_000
SMALL_P = 4096
LEVEL = 0.95


@dataclass
class Topology:
    ranks_per_host: int
    hosts_per_switch: int
    uplink_G: float  # s/B

    def argv(self):
        return [
            "--ranks-per-host",
            self.ranks_per_host,
            "--hosts-per-switch",
            self.hosts_per_switch,
            "--uplink-G",
            repr(self.uplink_G),
        ]


@dataclass
class Extras:
    """What a simulation may add to plain costs."""

    dist: tuple | None = None  # (sizes, quantiles) to draw message times from
    exchange: tuple | None = None  # (sizes, seconds) an exchange message costs more than one alone
    skew: np.ndarray | None = None  # per-rank starts, or a pool to draw them from
    topology: Topology | None = None
    replicates: int = 1
    seed: int = 1
    fair: bool = False  # a rank's messages in flight share its send channel equally


@dataclass
class SimAnswer:
    regime: str  # "simulated", "symmetric" (one rank for all) or "cost model"
    median: float
    low: float
    high: float
    replicates: list = field(default_factory=list)
    raw: dict = field(default_factory=dict)

    def to_dict(self):
        return {
            "regime": self.regime,
            "median_s": self.median,
            "low_s": self.low,
            "high_s": self.high,
            "level": LEVEL,
            "replicates": len(self.replicates) or None,
            "events_per_s": self.raw.get("events_per_s"),
            "events": self.raw.get("events"),
            "nops": self.raw.get("nops"),
        }


def interval(values) -> tuple[float, float, float]:
    """Median and the central LEVEL range of the replicates (a prediction interval)."""
    v = np.asarray(values, dtype=float)
    lo, hi = (1 - LEVEL) / 2, (1 + LEVEL) / 2
    return float(np.median(v)), float(np.quantile(v, lo)), float(np.quantile(v, hi))


def run_argv(argv, costs: SimCosts, extras: Extras, more=()) -> dict:
    with tempfile.TemporaryDirectory(prefix="mpiscope-sim-") as tmp:
        args = list(argv) + costs.argv() + ["--replicates", extras.replicates, "--seed", extras.seed]
        if extras.dist is not None:
            args += ["--dist", write_dist(Path(tmp) / "dist.txt", *extras.dist)]
        if extras.exchange is not None:
            args += ["--exchange", write_exchange(Path(tmp) / "exchange.txt", *extras.exchange)]
        if extras.skew is not None:
            skew = Path(tmp) / "skew.txt"
            skew.write_text("\n".join(f"{x:.9e}" for x in extras.skew) + "\n")
            args += ["--skew", skew]
        if extras.topology is not None:
            args += extras.topology.argv()
        if extras.fair:
            args.append("--fair")
        return binary.simulate(args + list(more))


def answer(doc: dict) -> SimAnswer:
    spans = [r["makespan_s"] for r in doc["replicates"]]
    med, lo, hi = interval(spans)
    return SimAnswer("simulated", med, lo, hi, spans, doc)


def probe(bench, algo, p, size, segment) -> dict:
    """Operations per rank and rank symmetry, from a few generated ranks."""
    return binary.probe(["--bench", bench, "--algo", algo, "-p", p, "--size", size, "--segment", segment])


def algorithm(bench, algo, p, size, costs: SimCosts, extras: Extras, more=()) -> SimAnswer:
    """Our algorithm `algo` of `bench` on p ranks at `size`, simulated whole
    when its schedule holds at most MAX_OPS operations; beyond that, rank 0
    alone when every rank is rank 0 shifted (and costs and starts are equal
    for all); else the cost model answers. `regime` says which."""
    if p < 1:
        raise UsageError(f"-p/--np must be at least 1, got {p}")
    argv = ["--bench", bench, "--algo", algo, "-p", p, "--size", size]
    # Up to SMALL_P ranks try the whole schedule first (it stops at MAX_OPS); beyond,
    # a few ranks tell whether it can fit before millions are generated.
    info = probe(bench, algo, p, size, costs.segment) if p > SMALL_P else None
    if info is None or info["max_ops_probed"] * p <= MAX_OPS:
        try:
            return answer(run_argv(argv + ["--max-ops", MAX_OPS], costs, extras, more))
        except binary.TooLarge:
            info = info or probe(bench, algo, p, size, costs.segment)
    uniform = extras.dist is None and extras.skew is None and extras.topology is None and not extras.fair
    if info["symmetric"] and uniform:
        ans = answer(run_argv(argv + ["--symmetric"], costs, extras, more))
        ans.regime = "symmetric"
        return ans
    t = predict_time(
        bench,
        algo,
        size,
        p,
        Costs(
            costs.alpha_s + costs.o_s,
            costs.beta_s + costs.G + costs.O,
            costs.alpha_r + costs.o_r + costs.L,
            costs.beta_r + costs.O,
            costs.gamma,
            costs.segment,
        ),
    )
    return SimAnswer("cost model", t, t, t, [], {})
