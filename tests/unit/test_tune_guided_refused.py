# SPDX-License-Identifier: BSD-3-Clause
"""The guided search (tune/guided.py) with an algorithm the library refuses:
every launch forcing it fails, as MPICH's fallback=error makes it where the
communicator lacks what the algorithm needs. It is launched at the first size
it is a contender at, and at no other; the decisions stay the exhaustive
search's. No MPI: launches drawn from Hockney costs with noise."""

import math

import numpy as np

from tune_synthetic import Served, plan
from mpiscope.mpilibs.algorithm_catalog import DEFAULT, Algorithm, Catalog
from mpiscope.mpilibs.library import Reading
from mpiscope.sim.costs import SimCosts
from mpiscope.tune import tuner as T
from mpiscope.tune.guided import Guided

A, B = 20e-6, 1e-8
GRID = [8 * 4**k for k in range(8)]  # 8 B … 128 KiB
TRUE = {
    "recursive_doubling": lambda n, p: math.log2(p) * (A + n * B),
    "ring": lambda n, p: 2 * (p - 1) * A + 2 * n * B * (p - 1) / p,
}
REFUSED = "smp"  # no counterpart of ours, and every launch forcing it fails


def simulated(coll, ours, p, size):
    return TRUE[ours](size, p)


def launches(log, seed=7):
    """Every cell drawn from TRUE with 3% noise (the default runs recursive
    doubling); a launch forcing REFUSED fails and gives no samples; `log`
    gets each (name, size) launched."""
    rng = np.random.default_rng(seed)

    def measure(plan_, catalog, jobs, samples, repeat=1, say=print):
        for c, pairs in jobs.items():
            for name, sizes in pairs:
                for s in sizes:
                    log.append((name, s))
                    if name == REFUSED:
                        samples.failures.append((f"{c}={name}", "fallback=error"))
                        continue
                    alg = "recursive_doubling" if name == DEFAULT else name
                    for launch in range(repeat):
                        samples.add(c, name, s, TRUE[alg](s, plan_.np) * rng.lognormal(0, 0.03, 20), launch + 1)

    return Served(measure)


def tuned(search, log):
    names = ["recursive_doubling", "ring", REFUSED]
    cat = Catalog("mpich", "4.0.2", {"allreduce": [Algorithm(n, str(i)) for i, n in enumerate(names, 1)]}, "test")
    cfg = T.TuneConfig(
        collectives=["allreduce"],
        sizes=GRID,
        adaptive=search != "exhaustive",
        search=search,
        sim_costs=SimCosts(alpha_s=A, beta_s=B),
    )
    t = T.Tuner(plan(8), cat, cfg, launches(log), say=lambda *_: None)
    t.reading = Reading({("allreduce", s): ("recursive_doubling", True) for s in GRID}, {})
    if search == "guided":
        t.searcher.simulate = simulated
        t.searcher.counterparts = {}
    t.search()
    return t


def test_an_algorithm_every_launch_of_which_failed_is_not_launched_again():
    log, full_log = [], []
    full, guided = tuned("exhaustive", full_log), tuned("guided", log)
    assert len({s for n, s in full_log if n == REFUSED}) == len(GRID)  # the exhaustive search: every size
    assert len({s for n, s in log if n == REFUSED}) == 1  # the guided search: its first size alone
    g = guided.searcher
    assert g._refused("allreduce", REFUSED) and not g._refused("allreduce", DEFAULT)
    assert all(REFUSED not in g._rivals("allreduce", s) for s in GRID)
    assert all(full.decisions.winners[("allreduce", s)] == guided.decisions.winners[("allreduce", s)] for s in GRID)


def test_without_the_rule_it_is_launched_again(monkeypatch):
    """The same search with the refusal ignored launches it at more sizes:
    its stand-in's prediction, never corrected, stays a contender."""
    monkeypatch.setattr(Guided, "_refused", lambda self, c, n: False)
    log = []
    tuned("guided", log)
    assert len({s for n, s in log if n == REFUSED}) > 1
