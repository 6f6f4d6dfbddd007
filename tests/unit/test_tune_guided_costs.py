# SPDX-License-Identifier: BSD-3-Clause
"""The guided search without the user's costs (--from-run, --machine):
the tune measures them once, a pingpong at its sizes (tune/p2p_costs.py),
and names that run in its document."""

import json
from pathlib import Path

from tune_replay import Replay, catalog_of, reading
from tune_synthetic import plan

from mpiscope.models.costmodels import Costs, predict_time
from mpiscope.sim.costs import SimCosts
from mpiscope.tune import tuner as T
from mpiscope.tune.p2p_costs import FIT_SIZES, pingpong_sizes
from mpiscope.tune.result_file import save

STORED = Path(__file__).resolve().parents[1] / "data" / "tune-replay" / "openmpi-4.1-p2-4.json"


def test_the_pingpong_has_the_tune_s_sizes_and_two_at_least():
    assert pingpong_sizes([65536, 8, 1024, 8]) == [8, 1024, 65536]
    assert pingpong_sizes([0]) == sorted({0, *FIT_SIZES})
    assert len(pingpong_sizes([4096])) >= 2


def test_a_guided_tune_without_costs_measures_them_once_for_every_communicator_size(tmp_path, monkeypatch):
    stored = json.loads(STORED.read_text())
    costs, calls, simulated_with = SimCosts(alpha_s=5e-6, beta_s=1e-9), [], []

    def measured(plan_, sizes, say=print):
        calls.append((plan_.np, list(sizes)))
        return costs, "pingpong-run"

    def simulator(given):  # the cost models in place of the simulator's binary (no process here)
        simulated_with.append(given)
        return lambda coll, ours, p, size: predict_time(coll, ours, size, p, Costs.hockney(5e-6, 1e-9))

    monkeypatch.setattr(T, "measured_costs", measured)
    monkeypatch.setattr(T, "simulator", simulator)
    cfg = T.TuneConfig(collectives=stored["collectives"], sizes=stored["sizes"], search="guided")
    tuning = T.Tuning([plan(2), plan(4)], catalog_of(stored), cfg, tmp_path, say=lambda *_: None,
                      launches=Replay(stored))
    for t in tuning.tuners:
        t.reading = reading(stored, t.p)
    assert all(t.searcher.simulate is None for t in tuning.tuners)
    save(tuning.run(), tmp_path)
    assert calls == [(2, stored["sizes"])]  # the first communicator size's layout, once
    assert simulated_with == [costs] and all(t.searcher.simulate is not None for t in tuning.tuners)
    doc = json.loads((tmp_path / "tune.json").read_text())
    assert doc["search"] == "guided" and doc["costs_run"] == "pingpong-run"
    assert doc["cells"]["measured"] < doc["cells"]["exhaustive"]
