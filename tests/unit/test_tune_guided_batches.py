# SPDX-License-Identifier: BSD-3-Clause
"""The guided search measures a size's contenders a batch at a time (no MPI):
after the default, at most guided.BATCH per size and round; and an
algorithm not measured yet borrows the spread of the measured algorithms'
own parts once OWN_PARTS_KNOWN of them are measured."""

import math

import numpy as np

from tune_synthetic import Served, plan
from mpiscope.mpilibs.algorithm_catalog import DEFAULT, Algorithm, Catalog
from mpiscope.mpilibs.library import Reading
from mpiscope.sim.costs import SimCosts
from mpiscope.tune import tuner as T
from mpiscope.tune.guided import BATCH
from mpiscope.tune.sim_prior import OWN_PARTS_KNOWN, PRIOR_ERROR, Correction

A, B, P = 20e-6, 1e-8, 8
GRID = [8 * 4 ** k for k in range(6)]   # 8 B … 8 KiB
LOG_P = math.log2(P)
TRUE = {"recursive_doubling": lambda n: LOG_P * (A + n * B),
        "ring": lambda n: 2 * (P - 1) * A + 2 * n * B * (P - 1) / P,
        "rabenseifner": lambda n: 2 * LOG_P * A + 2 * n * B * (P - 1) / P,
        "fan_in_fan_out": lambda n: 2 * LOG_P * (A + n * B),
        "reduce_scatter_allgather": lambda n: 2 * LOG_P * A + 2 * n * B}
# how far the launches run from the stub simulation, per algorithm: the own parts to learn
OWN = {"recursive_doubling": 1.0, "ring": 1.1, "rabenseifner": 0.95, "fan_in_fan_out": 1.05,
       "reduce_scatter_allgather": 1.0}


def guided(rounds: list):
    """A guided tune of the five algorithms; `rounds` gets each call's
    {(name, size)} launched."""
    rng = np.random.default_rng(11)

    def measure(plan_, catalog, jobs, samples, repeat=1, say=print):
        cells = set()
        for c, pairs in jobs.items():
            for name, sizes in pairs:
                alg = "recursive_doubling" if name == DEFAULT else name
                for s in sizes:
                    for launch in range(repeat):
                        samples.add(c, name, s, TRUE[alg](s) * OWN[alg] * rng.lognormal(0, 0.02, 20), launch + 1)
                    cells.add((name, s))
        rounds.append(cells)

    cat = Catalog("openmpi", "4.1.4", {"allreduce": [Algorithm(n, str(i)) for i, n in enumerate(TRUE, 1)]}, "test")
    cfg = T.TuneConfig(collectives=["allreduce"], sizes=GRID, adaptive=True, search="guided",
                       sim_costs=SimCosts(alpha_s=A, beta_s=B))
    t = T.Tuner(plan(P), cat, cfg, Served(measure), say=lambda *_: None)
    t.reading = Reading({("allreduce", s): ("recursive_doubling", True) for s in GRID}, {})
    t.searcher.simulate = lambda coll, ours, p, size: TRUE[ours](size)
    t.searcher.counterparts = {}
    t.search()
    return t


def test_after_the_default_each_round_measures_at_most_a_batch_per_size():
    rounds = []
    t = guided(rounds)
    first = next(s for n, s in rounds[0])
    assert rounds[0] == {(DEFAULT, first)}
    at_first = [{n for n, s in r if s == first and n != DEFAULT} for r in rounds[1:]]
    at_first = [r for r in at_first if r]
    assert len(at_first[0]) == BATCH      # four contenders: the first batch is full
    for r in rounds:
        by_size = {}
        for n, s in r:
            if n != DEFAULT:
                by_size[s] = by_size.get(s, 0) + 1
        assert all(k <= BATCH for k in by_size.values())
    assert set(t.decisions.winners) == {("allreduce", s) for s in GRID}


def test_an_algorithm_not_measured_borrows_the_spread_of_the_measured_own_parts():
    corr = Correction(floor=0.02)
    cells = {"ring": (1.0, 1.0), "binomial": (1.0, 1.1), "linear": (1.0, 1.3)}
    corr.learn(1024, dict(list(cells.items())[:OWN_PARTS_KNOWN - 1]))
    assert corr.spread("scatter", 1024) == PRIOR_ERROR  # too few own parts to tell their spread
    corr.learn(4096, {"ring": (1.0, 1.0), "binomial": (1.0, 1.1), "linear": (1.0, 1.3)})
    owns = list(corr.own.values())
    assert len(owns) == OWN_PARTS_KNOWN
    expect = math.hypot(float(np.std(owns, ddof=1)), corr.error(relative=True))
    assert math.isclose(corr.spread("scatter", 4096, relative=True), expect)
    assert corr.spread("scatter", 4096, relative=True) < PRIOR_ERROR


def test_a_stand_in_own_part_is_not_a_simulation_spread():
    """An algorithm simulated as another (a stand-in) may run far from it:
    its own part says nothing of how far simulations miss."""
    corr = Correction(floor=0.02)
    corr.stand_ins.add("nb")
    corr.learn(1024, {"ring": (1.0, 1.0), "binomial": (1.0, 1.05), "nb": (1.0, 4.0)})
    assert corr.spread("scatter", 1024) == max(PRIOR_ERROR, corr.error())
    corr.learn(1024, {"linear": (1.0, 1.1)})
    owns = [v for n, v in corr.own.items() if n != "nb"]
    expect = math.hypot(float(np.std(owns, ddof=1)), corr.error())
    assert math.isclose(corr.spread("scatter", 1024), max(corr.floor, expect))


def test_a_batch_that_measures_nothing_ends_the_round():
    """Were a batch's launches to add no cell and leave none out, the same
    batch would be chosen again: the round ends instead."""
    t = guided([])
    g = t.searcher
    s, n = next((s, n) for s in GRID for n in TRUE if (s, n) not in g.measured.cells["allreduce"])
    g._contenders = lambda c, x: [DEFAULT, n]
    g._measure_points = lambda batch: None
    g._measure_round({"allreduce": {s: [DEFAULT, n]}})
    assert (s, n) not in g.measured.cells["allreduce"]
