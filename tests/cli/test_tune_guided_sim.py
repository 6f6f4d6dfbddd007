# SPDX-License-Identifier: BSD-3-Clause
"""The guided search with the simulator itself (a process, no MPI rank):
every library algorithm with a counterpart of ours is simulated at every
cell of a stored tune (tests/data/tune-replay), the simulation is corrected
by the cells measured, and the search decides as the exhaustive one."""

import json
import math
from pathlib import Path

from tune_replay import Replay, catalog_of, reading
from mpiscope.mpilibs.algorithm_catalog import DEFAULT
from mpiscope.sim.costs import SimCosts
from mpiscope.tune import tuner as T
from mpiscope.tune.sim_prior import counterpart
from tune_synthetic import plan

STORED = Path(__file__).resolve().parents[1] / "data" / "tune-replay" / "openmpi-4.1-p2-4.json"


def test_the_simulator_guides_a_stored_tune_to_the_exhaustive_decisions():
    stored = json.loads(STORED.read_text())
    costs = SimCosts(alpha_s=1e-6, beta_s=1e-10)   # shared memory's order of magnitude
    out = {}
    for search in ("exhaustive", "guided"):
        cfg = T.TuneConfig(collectives=stored["collectives"], sizes=stored["sizes"],
                           adaptive=search != "exhaustive", search=search, sim_costs=costs)
        t = T.Tuner(plan(4), catalog_of(stored), cfg, Replay(stored), say=lambda *_: None)
        t.reading = reading(stored, 4)
        t.search()
        out[search] = t
    guided = out["guided"].searcher
    for c in stored["collectives"]:
        ours = [n for n in out["guided"].names[c]
                if n != DEFAULT and counterpart(c, n, guided.model_names) is not None]
        assert ours, c
        for s in stored["sizes"]:
            for n in ours:
                assert guided.simulated[c][(s, n)] > 0, (c, s, n)
            assert out["guided"].decisions.winners[(c, s)] == out["exhaustive"].decisions.winners[(c, s)]
        learned = guided.corrections[c].ratios
        assert learned and all(math.isfinite(r) for by in learned.values() for r in by.values())
