# SPDX-License-Identifier: BSD-3-Clause
"""What at scale: a traced application's time in communication at larger rank
counts, under the library's default selection and under the tune's. The traced
pattern is replicated to p' ranks (sim/replicate.py) and simulated. A collective
call runs as our algorithm of the structure of the one each selection picks
(mpilibs: model_names), at the tune's communicator size nearest p' (log scale):
tuned, its rule at the call's library size (tune/library_sizes.py); default, what
the tune read the default to run. A call without such an algorithm or tuned cell
keeps its traced time under both, and says so. With `library_eager`, messages above
the library's eager limit on the traced transport go by rendezvous (eager_limit.py)
unless the costs set one. Intervals: the central 95% of the seeded replicates."""

from __future__ import annotations

import math
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from mpiscope import mpilibs
from mpiscope.common.errors import UsageError
from mpiscope.common.jsonable import plain
from mpiscope.mpilibs.algorithm_catalog import DEFAULT
from mpiscope.mpilibs.selection import chosen
from mpiscope.models.costmodels import ALGORITHMS
from mpiscope.sim import binary
from mpiscope.sim.replicate import Algorithms, estimate_ops, write_schedule
from mpiscope.sim.simulate import MAX_OPS, interval, probe, run_argv
from mpiscope.tune.model_fits import model_of
from mpiscope.tune.library_sizes import library_size
from mpiscope.tune.weights import nearest
from mpiscope.mpilibs.eager_limit import eager_limit
from mpiscope.app.trace_pattern import traced_pattern
from mpiscope.app.tune_cells import read_tune


@dataclass(frozen=True)
class Span:
    median_s: float
    low_s: float
    high_s: float


@dataclass(frozen=True)
class Ratio:
    median: float
    low: float
    high: float


@dataclass(frozen=True)
class ScalePoint:
    p: int
    default: Span  # time in communication per rank, mean over ranks
    tuned: Span
    speedup: Ratio  # default / tuned
    kept_share: float  # share of the default's time in calls left as traced
    nops: int


@dataclass(frozen=True)
class Selection:
    collective: str
    size: int
    p: int  # the communicator size at p' ranks
    default: str | None  # the library's algorithms (None: unknown)
    tuned: str | None
    ours_default: str | None  # ours simulated (None: the call stays as traced)
    ours_tuned: str | None
    note: str


@dataclass
class WhatIf:
    run_id: str
    traced_p: int
    tune: str
    library: str
    costs: str
    replicates: int
    seed: int
    traced_comm_s: float  # measured: mean over ranks
    validation: ScalePoint  # the traced p, simulated
    error: float  # validation.default.median_s / traced_comm_s - 1
    points: list = field(default_factory=list)
    selections: list = field(default_factory=list)
    kept: list = field(default_factory=list)  # calls with no algorithm of ours: call, traced_s, share
    eager_limit: float | None = None  # bytes; None: every message eager
    eager_from: str = "every message eager"

    def to_dict(self) -> dict:
        return plain(self)


class Selector:
    """Which of our algorithms each selection runs for a collective call."""

    def __init__(self, tune):
        self.tune, self.library = tune, mpilibs.get(tune.library)
        self.seen = {}  # (coll, q, size) -> Selection
        self.used = set()  # the keys of the calls of the latest schedule

    def pick(self, coll, q, size) -> Selection:
        key = (coll, q, size)
        if key not in self.seen:
            self.seen[key] = self._pick(coll, q, size)
        return self.seen[key]

    def _pick(self, coll, q, size) -> Selection:
        t = self.tune
        if coll not in t.rules:
            return Selection(coll, size, q, None, None, None, None, "not tuned: left as traced")
        p_t = nearest(sorted(int(x) for x in t.rules[coll]), q)
        read = [s for (c, p, s) in t.default_runs if c == coll and p == p_t]
        default = t.default_runs[(coll, p_t, nearest(read, size))] if read else None
        rule = chosen(t.rules[coll][p_t], library_size(self.library, coll, size, q))
        tuned = default if rule == DEFAULT else rule
        if default is None:
            return Selection(
                coll,
                size,
                q,
                None,
                tuned,
                None,
                None,
                f"the library's default was not read at {p_t} ranks: left as traced",
            )
        ours = [model_of(coll, n, self.library.model_names) if n else None for n in (default, tuned)]
        ours = [o if o in ALGORITHMS.get(coll, ()) else None for o in ours]
        if None in ours:
            missing = default if ours[0] is None else tuned
            return Selection(
                coll,
                size,
                q,
                default,
                tuned,
                None,
                None,
                f"{missing} has no algorithm of ours of its structure: left as traced",
            )
        return Selection(coll, size, q, default, tuned, ours[0], ours[1], f"rules of {p_t} ranks")

    def chooser(self, which):
        def choose(bench, q, size):
            s = self.pick(bench, q, size)
            self.used.add((bench, q, size))
            return s.ours_default if which == "default" else s.ours_tuned

        return choose


def _simulate(pattern, p_new, choose, algorithms, costs, extras):
    """(per-replicate mean time in communication, nops, mean traced time kept per rank)."""
    with tempfile.TemporaryDirectory(prefix="mpiscope-whatif-") as tmp:
        path = Path(tmp) / "app.bin"
        info = write_schedule(pattern, p_new, choose, algorithms, path, MAX_OPS)
        doc = run_argv(["--schedule", path], costs, extras)
    compute = float(np.mean(pattern.compute_s))
    comm = np.array([r["finish_mean_s"] for r in doc["replicates"]]) - compute
    return comm, info["nops"], float(np.mean(info["kept_s"]))


def _span(values) -> Span:
    return Span(*interval(values))


def _point(pattern, p_new, selector, algorithms, costs, extras) -> ScalePoint:
    selector.used = set()
    d, nops, kept = _simulate(pattern, p_new, selector.chooser("default"), algorithms, costs, extras)
    differs = any(selector.seen[k].ours_default != selector.seen[k].ours_tuned for k in selector.used)
    t = _simulate(pattern, p_new, selector.chooser("tuned"), algorithms, costs, extras)[0] if differs else d
    median = float(np.median(d))
    return ScalePoint(p_new, _span(d), _span(t), Ratio(*interval(d / t)), kept / median if median else 0.0, nops)


def _check_size(pattern, ps, selector, segment):
    """UsageError naming the rank counts whose schedules would pass MAX_OPS."""
    probed = {}

    def per_rank(bench, algo, q, size):
        key = (bench, algo, q, size)
        if key not in probed:
            probed[key] = probe(bench, algo, q, size, segment)["max_ops_probed"]
        return probed[key]

    too_large = {}
    for q in ps:
        n = max(estimate_ops(pattern, q, selector.chooser(which), per_rank) for which in ("default", "tuned"))
        if n > MAX_OPS:
            too_large[q] = n
    if too_large:
        raise UsageError(
            "the schedules would hold too many operations for the simulator ("
            + ", ".join(f"-p {q}: about {n:.2g}" for q, n in too_large.items())
            + f"; at most {MAX_OPS:.0e}): give fewer ranks"
        )


def _eager(costs, context, library_eager):
    """(costs with the eager limit the what-if takes, where it comes from)."""
    if not math.isinf(costs.S):
        return costs, "set by the costs"
    if not library_eager:
        return costs, "every message eager"
    e = eager_limit(context)
    return replace(costs, S=e.bytes), e.source


def whatif(run_dir, tune_dir, ps, costs, extras, *, library_eager=False) -> WhatIf:
    """The what-if of the traced profile run in `run_dir` under the tune in
    `tune_dir` at each rank count of `ps`, and at the traced run's own
    (the validation); `costs`: sim.costs.SimCosts, `extras`: sim.simulate.Extras;
    `library_eager`: the library's eager limit where the costs set none.
    Bad input raises UsageError before anything is built or simulated."""
    traced = traced_pattern(run_dir)
    costs, eager_from = _eager(costs, traced.context, library_eager)
    tune = read_tune(tune_dir)
    pattern = traced.pattern
    bad = [q for q in ps if q < 1 or q % pattern.p]
    if bad:
        raise UsageError(
            f"-p {','.join(map(str, bad))}: the traced run has {pattern.p} ranks; the what-if "
            f"replicates it, so give multiples of {pattern.p}"
        )
    binary.ensure_built()
    selector = Selector(tune)
    _check_size(pattern, ps, selector, costs.segment)
    algorithms = Algorithms(costs.segment)
    validation = _point(pattern, pattern.p, selector, algorithms, costs, extras)
    measured = float(np.mean(traced.comm_s))
    points = [_point(pattern, q, selector, algorithms, costs, extras) for q in ps]
    kept_names = {c.name for nodes in pattern.nodes for k, c, _ in nodes if k == "coll" and c.bench is None}
    kept = [
        {"call": n, "traced_s": traced.calls[n], "share": traced.calls[n] / measured if measured else 0.0}
        for n in sorted(kept_names)
    ]
    return WhatIf(
        traced.run_id,
        pattern.p,
        str(tune.directory),
        tune.library,
        costs.source,
        extras.replicates,
        extras.seed,
        measured,
        validation,
        validation.default.median_s / measured - 1 if measured else float("nan"),
        points,
        sorted(selector.seen.values(), key=lambda s: (s.collective, s.p, s.size)),
        kept,
        None if math.isinf(costs.S) else costs.S,
        eager_from,
    )
