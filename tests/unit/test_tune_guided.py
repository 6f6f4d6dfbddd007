# SPDX-License-Identifier: BSD-3-Clause
"""The guided search (tune/guided.py, tune/sim_prior.py) on replayed
launches, no MPI: which size it measures first, that the learned correction
moves toward what was measured, that it stops with sizes left to the
simulation, that the default is measured first and the others only where
they may beat it, that algorithms without a simulated counterpart stand in
as the default, that on the stored tunes (tests/data/tune-replay) it decides
as the exhaustive search does, also served each stored launch once, and
how bench/tune_search_replay.py accounts for its cells."""

import json
import math
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from tune_replay import Replay, catalog_of, reading
from tune_synthetic import Served, plan
from mpiscope.mpilibs.algorithm_catalog import DEFAULT, Algorithm, Catalog
from mpiscope.mpilibs.library import Reading
from mpiscope.models.costmodels import Costs, predict_time
from mpiscope.sim.costs import SimCosts
from mpiscope.tune.cell_samples import Samples
from mpiscope.tune import tuner as T
from mpiscope.tune.guided import expected_loss
from mpiscope.tune.model_fits import fit
from mpiscope.tune.readings import same_code
from mpiscope.tune.sim_prior import COUNTERPARTS, PRIOR_ERROR, Correction, counterpart, stand_in

A, B = 20e-6, 1e-8
GRID = [8 * 2 ** k for k in range(18)]   # 8 B … 1 MiB
TRUE = {"recursive_doubling": lambda n, p: math.log2(p) * (A + n * B),
        "ring": lambda n, p: 2 * (p - 1) * A + 2 * n * B * (p - 1) / p,
        "basic_linear": lambda n, p: 2 * (p - 1) * (A + n * B)}
RING_SIMULATED = 0.6   # the stub simulator's ring, against the launches' ring


def simulated(coll, ours, p, size):
    """A simulator that gets recursive doubling right and ring 40% fast."""
    return TRUE[ours](size, p) * (RING_SIMULATED if ours == "ring" else 1.0)


def launches(log, seed=5):
    """Every cell drawn from TRUE with 3% noise; the default runs recursive
    doubling; `log` gets each (name, size) launched."""
    rng = np.random.default_rng(seed)

    def measure(plan_, catalog, jobs, samples, repeat=1, say=print):
        for c, pairs in jobs.items():
            for name, sizes in pairs:
                for s in sizes:
                    alg = "recursive_doubling" if name == DEFAULT else name
                    for launch in range(repeat):
                        samples.add(c, name, s, TRUE[alg](s, plan_.np) * rng.lognormal(0, 0.03, 20),
                                    launch + 1)
                    log.append((name, s))
    return Served(measure)


def tuned(names, search, log=None, said=None):
    cat = Catalog("openmpi", "4.1.4", {"allreduce": [Algorithm(n, str(i)) for i, n in enumerate(names, 1)]},
                  "test")
    cfg = T.TuneConfig(collectives=["allreduce"], sizes=GRID, adaptive=search != "exhaustive",
                       search=search, sim_costs=SimCosts(alpha_s=A, beta_s=B))
    t = T.Tuner(plan(8), cat, cfg, launches([] if log is None else log),
                say=(said.append if said is not None else lambda *_: None))
    t.reading = Reading({("allreduce", s): ("recursive_doubling", True) for s in GRID}, {})
    if search == "guided":
        t.searcher.simulate = simulated
        t.searcher.counterparts = {}   # the stub simulates TRUE's algorithms alone: basic_linear keeps none
    t.search()
    return t


def test_the_first_size_measured_is_where_the_simulation_is_least_sure_of_the_winner():
    log = []
    tuned(["recursive_doubling", "ring"], "guided", log)
    first = log[0][1]
    # the simulated crossover of recursive doubling and ring: the default keeps a cell
    # unless ring is faster beyond the noise, so the doubt is least just there
    gap = {s: abs(math.log(simulated("allreduce", "ring", 8, s) /
                           simulated("allreduce", "recursive_doubling", 8, s)) - math.log(1 / 0.98))
           for s in GRID}
    closest = sorted(GRID, key=gap.get)[:2]
    assert first in closest, (first, closest)
    assert {n for n, s in log if s == first} >= {DEFAULT, "ring"}


def test_the_learned_correction_moves_toward_the_measurement():
    t = tuned(["recursive_doubling", "ring"], "guided")
    corr = t.searcher.corrections["allreduce"]
    # ring was simulated 40% fast: its correction is the log of 1 / 0.6, learned from its cells
    assert corr.ratios["ring"]
    for s in corr.ratios["ring"]:
        assert abs(corr.offset("ring", s) - math.log(1 / RING_SIMULATED)) < 0.05
        measured = math.log(t.measured.samples.median("allreduce", "ring", s))
        raw = math.log(simulated("allreduce", "ring", 8, s))
        assert abs(corr.predict("ring", s, simulated("allreduce", "ring", 8, s)) - measured) < abs(raw - measured)
    assert corr.error() < PRIOR_ERROR


def test_a_correction_learns_each_size_after_predicting_it():
    corr = Correction(floor=0.02)
    assert corr.error() == PRIOR_ERROR and corr.offset("ring", 1024) == 0.0
    corr.learn(1024, {"ring": (1.0, 2.0), "binomial": (1.0, 4.0)})
    # predicted before: the simulation itself
    assert [e for _, e, _ in corr.errors] == [math.log(2), math.log(4)]
    assert np.allclose([r for _, _, r in corr.errors], [-math.log(2) / 2, math.log(2) / 2])  # less the size's mean
    assert math.isclose(corr.predict("ring", 1024, 1.0), math.log(2))
    assert math.isclose(corr.predict("binomial", 1024, 1.0), math.log(4))
    corr.learn(4096, {"ring": (1.0, 3.0), "binomial": (1.0, 6.0)})
    # both 1.5 times their prediction: the size's shift; their comparison was exact
    assert np.allclose([r for _, _, r in corr.errors[2:]], [0.0, 0.0]) and corr.errors[2][0]
    assert math.isclose(corr.offset("ring", 4096) - corr.offset("ring", 1024), math.log(1.5))
    assert math.isclose(corr.offset("ring", 2048) - corr.offset("ring", 1024), math.log(1.5) / 2)  # halfway
    assert corr.error(relative=True) == 0.02   # the floor: comparisons were exact once corrected
    assert math.isclose(corr.error(), math.log(1.5))
    assert corr.spread("ring", 4096 * 2 ** 8) > corr.spread("ring", 4096)   # far from the measured sizes
    corr.learn(16384, {"ring": (1.0, None)})    # a failed launch teaches nothing
    assert len(corr.errors) == 4


def test_it_stops_with_most_sizes_left_to_the_simulation_and_decides_as_the_exhaustive():
    full, guided = tuned(["recursive_doubling", "ring"], "exhaustive"), tuned(["recursive_doubling", "ring"],
                                                                               "guided")
    measured_sizes = {s for s, n in guided.measured.cells["allreduce"] if n == DEFAULT}
    assert len(measured_sizes) < len(GRID) / 2
    assert guided.cell_counts()["measured"] < full.cell_counts()["measured"] / 2
    left = guided.searcher.predicted["allreduce"]
    assert set(left) == set(GRID) - measured_sizes
    agree = [full.decisions.winners[("allreduce", s)] == guided.decisions.winners[("allreduce", s)]
             for s in GRID]
    assert sum(agree) >= 0.95 * len(GRID)
    # every size left unmeasured is settled: what its predicted decision may lose is within the noise
    g = guided.searcher
    assert all(max(g._losses("allreduce", s)) <= g._tolerance("allreduce", s) for s in left)


def test_an_algorithm_without_a_simulated_counterpart_stands_in_as_the_default():
    said, log = [], []
    t = tuned(["recursive_doubling", "ring", "basic_linear"], "guided", log, said)
    g = t.searcher
    assert g.unsimulated["allreduce"] == ["basic_linear"]   # allreduce has no linear of ours
    assert any("basic_linear" in x and "stands in as the default" in x for x in said)
    for s in GRID:
        assert g.simulated["allreduce"][(s, "basic_linear")] == g.simulated["allreduce"][(s, DEFAULT)]
    first = log[0][1]
    assert ("basic_linear", first) in log          # its own part unknown yet: measured
    # once measured, its correction is its ratio to the default: it is left out of most sizes
    assert g.corrections["allreduce"].ratios["basic_linear"]
    assert sum(n == "basic_linear" for n, _ in log) < len({s for _, s in log})


def test_the_default_is_measured_first_at_each_size_and_the_rest_only_where_they_may_beat_it():
    log = []
    t = tuned(["recursive_doubling", "ring", "basic_linear"], "guided", log)
    sizes = list(dict.fromkeys(s for _, s in log))
    for s in sizes:
        assert [n for n, x in log if x == s][0] == DEFAULT
    g = t.searcher
    left_out = [(s, n) for s in sizes for n in ("ring", "basic_linear") if (n, s) not in log]
    assert left_out
    for s, n in left_out:   # its expected gain beyond the margin over the measured default is within the noise
        d = math.log(t.measured.samples.median("allreduce", DEFAULT, s))
        pred, _, err = g._guess("allreduce", s, n)
        bar = g._margin("allreduce", s)
        assert expected_loss(d - bar - pred, err) <= g._tolerance("allreduce", s)


def test_the_expected_loss_is_the_mean_gain_beyond_zero():
    """expected_loss(m, e) = E[max(0, X)], X ~ N(m, e): sigma / sqrt(2 pi) at
    m = 0, E[max(0, X)] - E[max(0, -X)] = m, and m itself without error."""
    assert math.isclose(expected_loss(0.0, 0.3), 0.3 / math.sqrt(2 * math.pi))
    for m, e in ((0.2, 0.1), (-0.4, 0.69), (0.05, 0.5)):
        assert math.isclose(expected_loss(m, e) - expected_loss(-m, e), m, abs_tol=1e-12)
    assert expected_loss(-1.0, 0.1) < 1e-9 and expected_loss(0.3, 0.0) == 0.3
    draws = np.random.default_rng(3).normal(-0.1, 0.2, 200_000)
    assert abs(expected_loss(-0.1, 0.2) - np.maximum(draws, 0).mean()) < 2e-3


def test_a_candidate_is_measured_when_its_expected_gain_beyond_the_bar_exceeds_the_noise():
    """A rival predicted well behind the bar with a small error is left out
    (what it may gain beyond the bar averages less than the noise threshold),
    one whose expected gain beyond the bar exceeds the noise is measured, even
    below the bar itself; a size is settled by the same rule, on the side of
    the predicted decision."""
    t = tuned(["recursive_doubling", "ring"], "guided")
    g = t.searcher
    s = next(iter(g.predicted["allreduce"]))   # a size not measured: the default is predicted there
    bar = 0.1
    g._margin = lambda c, x: bar
    assert math.isclose(g._tolerance("allreduce", s), -math.log(1 - g.cfg.noise))

    def rivals(ring):
        guesses = {DEFAULT: (0.0, 0.05, 0.05), "recursive_doubling": (0.0, 0.05, 0.05), "ring": ring}
        g._guess = lambda c, x, n: guesses[n]
        return g._contenders("allreduce", s), g._settled("allreduce", s)

    # 10% behind the default: what it may gain beyond the bar averages 5e-5
    assert rivals((0.1, 0.05, 0.05)) == ([DEFAULT], True)
    # 0.45 learned errors from the bar: it may gain 0.024 beyond it, more than the noise (a wide
    # bar from a noisy default would leave it out however much faster it runs)
    assert rivals((-0.05, 0.1, 0.1)) == ([DEFAULT, "ring"], False)
    # 0.2 beyond the bar: measured where its size is
    assert rivals((-0.3, 0.1, 0.1))[0] == [DEFAULT, "ring"] and g._winner("allreduce", s) == "ring"
    assert rivals((0.3, 0.69, 0.69)) == ([DEFAULT, "ring"], False)  # unsure: it may gain 0.12


def test_an_algorithm_not_measured_yet_keeps_the_prior_error():
    corr = Correction(floor=0.02)
    corr.learn(1024, {"ring": (1.0, 1.01), "binomial": (1.0, 1.02)})
    assert corr.error() < PRIOR_ERROR                 # two close predictions
    assert corr.spread("ring", 1024) == corr.error()
    assert corr.spread("scatter", 1024) == PRIOR_ERROR  # never measured: what the others taught is not its own


def test_a_counterpart_is_the_librarys_entry_in_counterparts_else_the_catalogs():
    ompi = COUNTERPARTS["openmpi"]
    assert counterpart("allreduce", "ring", {"ring": "ring"}, ompi) == "ring"
    assert counterpart("allreduce", "segmented_ring", {"ring": "ring"}, ompi) == "ring"
    assert counterpart("allreduce", "segmented_ring", {"ring": "ring"}) is None
    # the catalog's name for an algorithm this collective lacks ("linear") gives way to the entry's
    assert counterpart("allreduce", "basic_linear", {"basic_linear": "linear"}, ompi) == "fan_in_fan_out"
    # bcast has a linear of ours; the entry's None leaves basic_linear unsimulated all the same
    assert counterpart("bcast", "basic_linear", {"basic_linear": "linear"}) == "linear"
    assert counterpart("bcast", "basic_linear", {"basic_linear": "linear"}, ompi) is None


def test_on_the_stored_open_mpi_tune_the_counterparts_are_simulated_and_learn_their_own_part():
    """Open MPI's allreduce algorithms named in COUNTERPARTS are simulated as
    ours, not stood in as the default; a measured one gets its own part."""
    for p, full, guided in stored_tunes("openmpi-4.1-p4-18-sizes.json", once=True):
        g = guided.searcher
        assert not set(COUNTERPARTS["openmpi"]["allreduce"]) & set(g.unsimulated["allreduce"])
        on = [s for s in full.cfg.sizes_of("allreduce") if (s, "nonoverlapping") in g.simulated["allreduce"]]
        assert on == full.cfg.sizes_of("allreduce")
        own = guided.measured.cells["allreduce"] - guided.measured.inferred["allreduce"]  # launched for it
        measured = {n for s, n in own} & set(COUNTERPARTS["openmpi"]["allreduce"])
        assert measured and all(g.corrections["allreduce"].ratios.get(n) for n in measured)


def test_the_stand_in_is_the_default_else_the_fastest():
    assert stand_in(3.0, [1.0, 2.0]) == 3.0
    assert stand_in(None, [2.0, 1.0]) == 1.0
    assert stand_in(None, []) is None


def stored_tunes(name, once=False):
    """(p, exhaustive Tuner, guided Tuner) per communicator size of a stored
    tune, each algorithm with a counterpart predicted by our cost model in
    place of the simulator (a unit test starts no process), with the
    Hockney line of its pingpong, or of its 2-rank broadcast where it has
    none; `once`: each stored launch served once at most (Replay)."""
    stored = json.loads((Path(__file__).resolve().parents[1] / "data" / "tune-replay" / name).read_text())
    if "pingpong" in stored:
        medians = {int(s): t for s, t in stored["pingpong"].items()}
    else:
        probe = Samples()
        Replay(stored).launch(plan(2), {"bcast": stored["sizes"]}, "bcast=default", probe, {"bcast": DEFAULT})
        medians = {s: probe.median("bcast", DEFAULT, s) for s in stored["sizes"]}
    line = fit("bcast", DEFAULT, 2, medians, {}, min_points=2)
    for p in stored["tune"]["ps"]:
        out = {}
        for search in ("exhaustive", "guided"):
            cfg = T.TuneConfig(collectives=stored["collectives"], sizes=stored["sizes"],
                               adaptive=search != "exhaustive", search=search,
                               sim_costs=SimCosts(alpha_s=line.alpha, beta_s=line.beta))
            t = T.Tuner(plan(p), catalog_of(stored), cfg, Replay(stored, once=once), say=lambda *_: None)
            t.reading = reading(stored, p)
            if search == "guided":
                t.searcher.simulate = lambda coll, ours, p_, size: predict_time(
                    coll, ours, size, p_, Costs.hockney(line.alpha, line.beta))
            t.search()
            out[search] = t
        yield p, out["exhaustive"], out["guided"]


@pytest.mark.parametrize("name", ["openmpi-4.1-p2-4.json", "openmpi-4.1-p4-18-sizes.json"])
def test_on_a_stored_tune_it_decides_as_the_exhaustive_search_and_measures_less(name):
    for p, full, guided in stored_tunes(name):
        assert guided.cell_counts()["measured"] < full.cell_counts()["measured"]
        for c, s in full.decisions.winners:
            assert guided.decisions.winners[(c, s)] == full.decisions.winners[(c, s)], (p, c, s)
        assert "basic_linear" in guided.searcher.unsimulated["bcast"]


def tuned_over_default(full, winners) -> float:
    """The geometric mean over the cells of the chosen algorithm's median over
    the default's, both in the exhaustive tune's measurements."""
    m = full.measured.samples
    logs = [math.log(m.median(c, winners[(c, s)], s) / m.median(c, DEFAULT, s)) for c, s in full.decisions.winners]
    return math.exp(sum(logs) / len(logs))


@pytest.mark.parametrize("name", ["mpich-4.0-p2-4.json", "openmpi-4.1-p2-4.json", "openmpi-4.1-p4-18-sizes.json"])
def test_served_each_stored_launch_once_it_never_has_more_launches_and_keeps_the_targets(name):
    """Served as the tune measured it (no launch twice), the guided search
    never has more launches of a cell than the exhaustive one, agrees with
    it on at least 95% of each communicator size's cells (the same code),
    and its tuned/default geometric mean is within 2% of the exhaustive's."""
    for p, full, guided in stored_tunes(name, once=True):
        for c, cells in guided.measured.cells.items():
            for s, n in cells:
                got, had = (len(t.measured.samples.launches(c, n, s)) for t in (guided, full))
                assert got <= had, (p, c, s, n)
        winners, reps = guided.decisions.winners, guided.measured.launches_of
        same = [same_code(reps, c, s, full.decisions.winners[(c, s)], winners[(c, s)])
                for c, s in full.decisions.winners]
        assert sum(same) >= 0.95 * len(same), p
        full_gm = tuned_over_default(full, full.decisions.winners)
        assert abs(tuned_over_default(full, winners) / full_gm - 1) <= 0.02, p


def test_a_whole_guided_tune_says_its_search_in_the_tune_document(tmp_path):
    """A whole tune (search, rules, files, verification) with the guided
    search on the stored Open MPI launches: tune.json names the search and
    is the tune document."""
    import jsonschema

    from mpiscope.tune.result_file import save

    stored = json.loads((Path(__file__).resolve().parents[1] / "data" / "tune-replay" /
                         "openmpi-4.1-p2-4.json").read_text())
    cfg = T.TuneConfig(collectives=stored["collectives"], sizes=stored["sizes"], search="guided",
                       sim_costs=SimCosts(alpha_s=A, beta_s=B))
    tuning = T.Tuning([plan(2), plan(4)], catalog_of(stored), cfg, tmp_path, say=lambda *_: None,
                      launches=Replay(stored))
    for t in tuning.tuners:
        t.reading = reading(stored, t.p)
        t.searcher.simulate = lambda coll, ours, p_, size: predict_time(coll, ours, size, p_, Costs.hockney(A, B))
    save(tuning.run(), tmp_path)
    doc = json.loads((tmp_path / "tune.json").read_text())
    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "schemas" / "tune.schema.json").read_text())
    jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
    assert doc["search"] == "guided"
    assert doc["cells"]["measured"] < doc["cells"]["exhaustive"]


def test_the_replay_bench_counts_every_guided_cell_once_by_kind():
    """bench/tune_search_replay.py's account of where the guided search's
    cells went: the default's, the simulated algorithms' and the stand-ins'
    add up to the cells it measured; those no search steered by its
    simulation could leave out are a part of the exhaustive grid."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from tune_search_replay import guided_cells

    stand_ins = 0
    for p, full, guided in stored_tunes("openmpi-4.1-p2-4.json", once=True):
        setup = SimpleNamespace(colls=list(full.measured.cells), cost_cells=set())
        got = guided_cells(setup, full, guided)
        assert got["default"] + got["simulated"] + got["stand_in"] == guided.cell_counts()["measured"]
        assert got["costs"] == 0
        stand_ins += got["stand_in"]
        assert 0 <= got["left_out"] <= got["undecidable"] <= full.cell_counts()["measured"]
        assert set(got["learned_error"]) == set(full.measured.cells)
    assert stand_ins > 0
