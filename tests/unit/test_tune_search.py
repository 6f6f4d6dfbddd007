# SPDX-License-Identifier: BSD-3-Clause
"""The tuner's search, decisions and files on a synthetic library (no MPI):
measurements are drawn from known cost curves with noise, so which algorithm
should win where is known. Two communicator sizes in one tune give one file
per format with rules per communicator size, each checked by our readers."""

import json
import math

import numpy as np
import pytest

from mpiscope import mpilibs
from mpiscope.mpilibs.mpich import selection_json as mpich_selection
from mpiscope.mpilibs.openmpi import rules as ompi_rules
from mpiscope.mpilibs.algorithm_catalog import DEFAULT, Algorithm, Catalog
from mpiscope.mpilibs.library import Reading
from mpiscope.tune import adaptive as adaptive_search, tuner as T
from mpiscope.tune.result import changeovers
from mpiscope.tune.weights import read_weights
from tune_synthetic import A, B, SIZES, Served, cost, fake_measure, ompi_catalog, plan

def mpich_catalog():
    rd, ring = "MPIR_Allreduce_intra_recursive_doubling", "MPIR_Allreduce_intra_ring"
    # the library's own tree decides by a condition we never write: selects() says DEFAULT there
    tree = {"collective=allreduce": {"comm_type=intra": {
        "is_commutative=1": {f"algorithm={rd}": {}}, "is_commutative=any": {f"algorithm={ring}": {}}}}}
    return Catalog("mpich", "4.0.2", {"allreduce": [Algorithm("recursive_doubling", "rd", rd),
                                                    Algorithm("ring", "ring", ring)]},
                   "test", default_tree=tree, containers=frozenset({rd, ring}))


def tuning(catalog, ps, tmp_path, **kw):
    cfg = T.TuneConfig(collectives=["allreduce"], sizes=SIZES, **kw)
    t = T.Tuning([plan(p) for p in ps], catalog, cfg, tmp_path, say=lambda *_: None,
                 launches=fake_measure())
    for x in t.tuners:
        x.search()
    return t


def test_two_communicator_sizes_give_rules_per_size_in_every_format(tmp_path):
    t = tuning(ompi_catalog(), [2, 4], tmp_path, adaptive=False)
    table, _ = t.table()
    assert set(table["allreduce"]) == {2, 4}
    w2, w4 = ({s: x.decisions.winners[("allreduce", s)] for s in SIZES} for x in t.tuners)
    assert set(w2.values()) == {DEFAULT}                     # on 2 ranks the default holds
    assert w4[8] == DEFAULT and w4[128 * 1024] == "ring"     # on 4, ring from ~16 KiB
    written = t.write(table)                                 # raises if a reader disagrees
    assert set(written) == {"openmpi", "openmpi-json"}
    cat = ompi_catalog()
    parsed = ompi_rules.read_classic(written["openmpi"].read_text(), cat)
    # sections for 2 and 4 ranks, the library's own below, between and above (1, 3, 5)
    assert [p for p, _ in parsed["allreduce"]] == [1, 2, 3, 4, 5]
    for p, w in ((2, w2), (4, w4)):
        for s in SIZES:
            want = 0 if w[s] == DEFAULT else int(cat.find("allreduce", w[s]).value)
            assert ompi_rules.classic_selects(parsed, "allreduce", p, s) == want
    assert ompi_rules.classic_selects(parsed, "allreduce", 3, 1 << 19) == 0
    js = ompi_rules.read_json(written["openmpi-json"].read_text(), cat)
    assert [(lo, hi) for lo, hi, _ in js["allreduce"]] == [(2, 2), (4, 4)]
    assert ompi_rules.json_selects(js, "allreduce", 4, 1 << 19) == "ring"
    assert ompi_rules.json_selects(js, "allreduce", 2, 1 << 19) == "ignore"


def test_two_communicator_sizes_in_mpich_json(tmp_path):
    t = tuning(mpich_catalog(), [4, 8], tmp_path, adaptive=False)
    table, _ = t.table()
    written = t.write(table)
    tree = mpich_selection.read(written["mpich"].read_text(), mpich_catalog())
    intra = tree["collective=allreduce"]["comm_type=intra"]
    assert list(intra) == ["comm_size<=3", "comm_size<=4", "comm_size<=7", "comm_size<=8",
                           "comm_size=any"]
    for p in (4, 8):
        assert mpich_selection.selects(tree, "allreduce", p, 1 << 19) == "MPIR_Allreduce_intra_ring"
        assert mpich_selection.selects(tree, "allreduce", p, 8) == DEFAULT
    assert mpich_selection.selects(tree, "allreduce", 6, 1 << 19) == DEFAULT   # not tuned: the library's


def test_mpich_switches_off_the_device_only_for_collectives_with_a_rule(tmp_path):
    """The device's own algorithms override MPIR's file: off where a rule names
    an algorithm (per collective when MPICH has the switch), untouched where not."""
    import dataclasses
    from mpiscope.mpilibs.selection import Rule

    cat = dataclasses.replace(mpich_catalog(), device_override=True,
                              device_percoll=frozenset({"allreduce", "bcast"}))
    t = tuning(cat, [4], tmp_path, adaptive=False)
    table, _ = t.table()
    written = t.write(table)
    mpich = mpilibs.get("mpich")
    params = mpich.use_settings(cat, written, table)
    assert params["MPIR_CVAR_DEVICE_COLLECTIVES"] == "percoll"
    assert params["MPIR_CVAR_ALLREDUCE_DEVICE_COLLECTIVE"] == "0"
    assert "MPIR_CVAR_BCAST_DEVICE_COLLECTIVE" not in params   # bcast has no rule: as without the file
    kept = {"allreduce": {4: [Rule(0, DEFAULT)]}}
    assert set(mpich.use_settings(cat, written, kept)) == {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE"}
    no_switch = dataclasses.replace(cat, device_percoll=frozenset())
    assert mpich.use_settings(no_switch, written, table)["MPIR_CVAR_DEVICE_COLLECTIVES"] == "none"


# ---------------------------------------------------------------- adaptive search

FOUR = {"recursive_doubling": lambda n, p: math.log2(p) * (A + n * B),
        "ring": lambda n, p: 2 * (p - 1) * A + 2 * n * B * (p - 1) / p,
        "rabenseifner": lambda n, p: 2 * math.log2(p) * A + 2.5 * n * B * (p - 1) / p + 1.5 * A,
        "nonoverlapping": lambda n, p: 2 * math.log2(p) * (A + n * B),
        "basic_linear": lambda n, p: 2 * (p - 1) * (A + n * B),
        "segmented_ring": lambda n, p: 2 * (p - 1) * A + 2 * n * B * (p - 1) / p + A * n / 8192}


def six(seed, log=None):
    """Six allreduce algorithms on 8 ranks; the default switches at 10 KB."""
    rng = np.random.default_rng(seed)

    def measure(plan, catalog, jobs, samples, repeat=1, say=print):
        for c, pairs in jobs.items():
            for name, sizes in pairs:
                alg = name
                for s in sizes:
                    if name == DEFAULT:
                        alg = "recursive_doubling" if s < 10000 else "ring"
                    samples.add(c, name, s, FOUR[alg](s, plan.np) * rng.lognormal(0, 0.03, 40))
                    if log is not None:
                        log.append((name, s))
    return SIX, Served(measure)


GRID = [8 * 2 ** k for k in range(18)]   # 8 B … 1 MiB
SIX = Catalog("openmpi", "4.1.4", {"allreduce": [Algorithm(n, str(i)) for i, n in enumerate(FOUR, 1)]},
              "test")


def tuner(cat, launches, reading=None, **kw):
    """A Tuner of allreduce on 8 ranks over GRID, `reading` what the default runs."""
    cfg = T.TuneConfig(collectives=["allreduce"], sizes=GRID, **kw)
    t = T.Tuner(plan(8), cat, cfg, launches, say=lambda *_: None)
    t.reading = reading or Reading({}, {})
    return t


def search(seed, adaptive, weights=None, log=None):
    t = tuner(*six(seed, log), adaptive=adaptive, weights=weights)
    t.search()
    return t


def test_adaptive_search_measures_few_cells_and_agrees_with_the_exhaustive():
    full = search(1, adaptive=False)
    adap = search(2, adaptive=True)
    c = adap.cell_counts()
    assert c["measured"] <= 0.4 * c["exhaustive"]
    assert full.cell_counts()["measured"] == c["exhaustive"] == 18 * 7
    same = [full.decisions.winners[("allreduce", s)] == adap.decisions.winners[("allreduce", s)] for s in GRID]
    assert sum(same) >= 0.95 * len(GRID), [(s, full.decisions.winners[("allreduce", s)],
                                          adap.decisions.winners[("allreduce", s)]) for s in GRID]
    # basic_linear loses to recursive doubling by far: measured only in the first
    # pass (the grid's ends and middle, where every algorithm is), never inside
    middle = GRID[len(GRID) // 2]
    inner = {n for (s, n) in adap.measured.cells["allreduce"] if GRID[0] < s < GRID[-1] and s != middle}
    assert "basic_linear" not in inner and DEFAULT in inner


def test_a_cell_the_default_runs_exactly_is_given_the_defaults_launches():
    """Where the library's default runs recursive doubling as forcing it does
    (below 4 KB here; mpilibs/openmpi/defaults.py reads that), the forced cell is not
    launched: it has the default's launches, counts as not measured, and
    cannot win against the default. Where the default runs it otherwise
    (as_forced False) it is not given them. The library's own change-over,
    as read, is in the result's change-overs."""
    log = []
    cat, launches = six(2, log)
    t = tuner(cat, launches, Reading({("allreduce", s): ("recursive_doubling" if s < 10000 else "ring",
                                                         s < 4096) for s in GRID}, {}))
    t.search()
    exact = {s for s in GRID if s < 4096}
    assert not [s for n, s in log if n == "recursive_doubling" and s in exact]
    given = {s for s, n in t.measured.inferred["allreduce"]}
    assert given and given <= exact
    assert given == {s for n, s in log if n == DEFAULT} & exact   # wherever the default was measured
    for s in given:
        a = t.measured.samples.values[("allreduce", "recursive_doubling", s)]
        b = t.measured.samples.values[("allreduce", DEFAULT, s)]
        assert [k for k, _ in a] == [k for k, _ in b] and all(
            np.array_equal(x, y) for (_, x), (_, y) in zip(a, b))
        assert t.decisions.winners[("allreduce", s)] != "recursive_doubling"
        row = [r for r in t.decisions.rows[("allreduce", s)] if r["algorithm"] == "recursive_doubling"]
        assert row[0]["launches_of"] == DEFAULT
    assert not any(r.get("launches_of") for (c, s), rows in t.decisions.rows.items() if s not in given
                   for r in rows)
    c = t.cell_counts()
    assert c["same_as_default"] == len(given)
    # the library's own change-over, as read, in tune.json's changeovers
    assert changeovers([t], cat, None)["allreduce"]["by_p"]["8"]["library"] == \
        [{"size": 16384, "from": "recursive_doubling", "to": "ring"}]
    assert c["measured"] == len(log) and c["measured"] + len(given) == \
        len(t.measured.cells["allreduce"])


def test_an_algorithm_that_runs_anothers_code_is_launched_once():
    """Where forcing segmented_ring runs the ring's code (ompi_defaults'
    delegations), and the ring below 64 B runs recursive doubling, which the
    default runs exactly there: segmented_ring is never launched, the ring
    not below 64 B; each has its representative's launches, counted as
    same_code (or same_as_default), and its decision row says whose."""
    log = []
    cat, launches = six(4, log)
    t = tuner(cat, launches, Reading(
        {("allreduce", s): ("recursive_doubling", s < 4096) for s in GRID},
        {**{("allreduce", s, "segmented_ring"): "ring" for s in GRID},
         **{("allreduce", s, "ring"): "recursive_doubling" for s in GRID if s < 64}}))
    t.search()
    assert not [s for n, s in log if n == "segmented_ring" or (n == "ring" and s < 64)]
    given = {(s, n) for s, n in t.measured.inferred["allreduce"]}
    assert {s for s, n in given if n == "segmented_ring"} == \
        {s for s, n in t.measured.cells["allreduce"] if n == "ring"}
    for s, n in given:
        rep = t.measured.launches_of[("allreduce", s, n)]
        assert rep == (DEFAULT if s < 64 or (n == "recursive_doubling" and s < 4096) else "ring")
        a, b = t.measured.samples.values[("allreduce", n, s)], t.measured.samples.values[("allreduce", rep, s)]
        assert [k for k, _ in a] == [k for k, _ in b] and all(
            np.array_equal(x, y) for (_, x), (_, y) in zip(a, b))
        row = [r for r in t.decisions.rows[("allreduce", s)] if r["algorithm"] == n]
        assert row[0]["launches_of"] == rep
    c = t.cell_counts()
    assert c["same_code"] == sum(1 for s, n in given if t.measured.launches_of[("allreduce", s, n)] != DEFAULT) > 0
    assert c["same_as_default"] + c["same_code"] == len(given)
    assert c["measured"] == len(log)


def test_the_default_is_ahead_only_when_every_algorithm_is_behind_it_at_both_ends():
    """search.default_ahead: at both ends every algorithm's mean log launch
    median (or its bound where it was out of reach) lies at least
    log(1 - noise) above the default's; the launches' spread does not
    matter, their means do."""
    from mpiscope.tune.cell_samples import Samples
    from mpiscope.tune.search import default_ahead

    def samples(x_at_lo, x_at_hi, spread=(1.0, 1.1, 0.95)):
        s = Samples()
        for launch, shift in enumerate(spread):
            s.add("bcast", DEFAULT, 64, np.full(5, 10e-6 * shift), launch)
            s.add("bcast", DEFAULT, 512, np.full(5, 20e-6 * shift), launch)
            s.add("bcast", "x", 64, np.full(5, x_at_lo * shift), 10 + launch)
            s.add("bcast", "x", 512, np.full(5, x_at_hi * shift), 10 + launch)
        return s

    ends = (64, 512)
    assert default_ahead(samples(12e-6, 25e-6), "bcast", ends, [DEFAULT, "x"], {}, 0.02)
    # within noise of the default (1% faster) still counts as behind it
    assert default_ahead(samples(9.9e-6, 19.8e-6), "bcast", ends, ["x"], {}, 0.02)
    # launches spread 10x: the means decide, as they do for a verdict
    assert default_ahead(samples(12e-6, 25e-6, (1.0, 10.0, 0.1)), "bcast", ends, ["x"], {}, 0.02)
    # 5% faster than the default at one end: it might win between
    assert not default_ahead(samples(12e-6, 19e-6), "bcast", ends, ["x"], {}, 0.02)
    assert not default_ahead(samples(9.5e-6, 25e-6), "bcast", ends, ["x"], {}, 0.02)
    # x not measured at an end: its bound there stands in for it, and without one nothing is known
    s = samples(12e-6, 25e-6)
    del s.values[("bcast", "x", 512)]
    assert not default_ahead(s, "bcast", ends, ["x"], {}, 0.02)
    assert default_ahead(s, "bcast", ends, ["x"], {(512, "x"): math.log(25e-6)}, 0.02)
    assert not default_ahead(s, "bcast", ends, ["x"], {(512, "x"): math.log(15e-6)}, 0.02)


def test_the_default_holds_only_where_it_runs_one_algorithm_exactly(monkeypatch):
    """The tuner asks search.default_ahead only of an interval the default won
    at both ends and where it runs one algorithm exactly throughout (read
    under gdb); the sizes of an interval it holds for are not measured and
    keep the default. Without that reading it is never asked. (Launches
    moving by 30%: the verdicts between algorithms seldom resolve an
    interval, so it is asked.)"""
    cat, launches = six_with_launches(1, launch_sd=0.3)
    asked = []
    real = adaptive_search.default_ahead

    def spy(samples, coll, ends, names, bounds, noise):
        held = real(samples, coll, ends, names, bounds, noise)
        lo, hi = ends
        asked.append((lo, hi, tuple(s for s in GRID if lo < s < hi), held))
        return held
    monkeypatch.setattr(adaptive_search, "default_ahead", spy)
    runs = {("allreduce", s): ("recursive_doubling" if s < 10000 else "ring", True) for s in GRID}
    for given in (runs, {}):
        asked.clear()
        t = tuner(cat, launches, Reading(given, {}))
        t.search()
        assert bool(asked) == bool(given)
        for lo, hi, between, held in asked:
            assert t.decisions.winners[("allreduce", lo)] == t.decisions.winners[("allreduce", hi)] == DEFAULT
            assert len({given[("allreduce", s)] for s in (lo, *between, hi)}) == 1
            if held:
                assert not [n for s, n in t.measured.cells["allreduce"] if s in between]
                assert all(t.decisions.winners[("allreduce", s)] == DEFAULT for s in between)
        assert not given or any(held for *_, held in asked)


def test_weighted_sizes_are_always_measured():
    called = {GRID[3]: 500.0, GRID[9]: 20.0}
    log = []
    plain = search(2, adaptive=True)
    t = search(2, adaptive=True, weights={"allreduce": {None: called}}, log=log)
    assert {s for _, s in log} >= set(called)
    assert all(("allreduce", s) in t.decisions.rows for s in called)
    assert t.cell_counts()["measured"] >= plain.cell_counts()["measured"]


def test_a_whole_tune_with_weights_and_two_communicator_sizes(monkeypatch, tmp_path):
    """Search, rules, files, result, text and report of a tune on 2 and 4 ranks
    with a profile's weights; the verification's launches replaced by the
    synthetic costs (tuned = the rule's algorithm)."""
    from mpiscope.mpilibs.selection import chosen
    from mpiscope.report.tune_data import tune_view
    from mpiscope.views.tune import format_tune


    def verify(self, table, written):
        rows = []
        for s in SIZES:
            rule = chosen(table["allreduce"][self.p], s)
            d, t = cost(DEFAULT, s, self.p), cost(rule, s, self.p)
            rows.append({"collective": "allreduce", "size": s, "p": self.p, "rule": rule,
                         "library_size": s, "speedup": d / t, "speedup_low": d / t,
                         "speedup_high": d / t, "verdict": "same" if rule == DEFAULT else
                         "tuned faster", "median_default_s": d, "median_tuned_s": t})
        return rows, [], []
    monkeypatch.setattr(T.Tuner, "verify", verify)
    w = tmp_path / "w.json"
    w.write_text(json.dumps({"format": "mpiscope-profile-weights", "version": 1, "run_id": "x",
                             "np": 4, "size_meaning": "…", "collectives": [
        {"collective": "allreduce", "comm_size": 4, "blocking": True, "calls": 90, "bytes": 0,
         "time_s": 1, "time_share": 1, "sizes": [
             {"lo": 131072, "hi": 131072, "calls": 90, "bytes": 0, "time_s": 1,
              "call_share": 1, "time_share": 1}]}]}))
    weights, _ = read_weights(w, ["allreduce"])
    cfg = T.TuneConfig(collectives=["allreduce"], sizes=SIZES, weights=weights)
    r = T.Tuning([plan(2), plan(4)], ompi_catalog("4.1.4"), cfg, tmp_path,
                 say=lambda *_: None, launches=fake_measure()).run()
    assert r["ps"] == [2, 4] and set(r["rules"]["allreduce"]) == {"2", "4"}
    assert {d["p"] for d in r["decisions"]} == {2, 4}
    # the application calls 128 KiB on 4 ranks: ring there, 90 calls of it
    wt = r["weighted"]
    before, after = 90 * cost(DEFAULT, 131072, 4), 90 * cost("ring", 131072, 4)
    assert wt["by_p"]["4"]["before_s"] == pytest.approx(before)
    assert wt["by_p"]["4"]["after_s"] == pytest.approx(after) and wt["by_p"]["2"]["before_s"] == 0
    assert wt["speedup"] == pytest.approx(before / after)
    text = format_tune(r)
    assert "allreduce p=4" in text and "change-overs allreduce p=2" in text
    view = tune_view(r, str(tmp_path))
    assert [row["p"] for row in view["collectives"][0]["rows"]] == [2, 4]
    from mpiscope.cli.report import write_tune_report
    (tmp_path / "tune.json").write_text(json.dumps(r, default=str))
    html = write_tune_report([tmp_path], tmp_path / "r.html").read_text()
    assert f"4 ranks {before * 1e6:,.1f} → {after * 1e6:,.1f} µs" in html


# ---------------------------------------------------------------- cost models in the search

def six_with_launches(seed, launch_sd=0.10):
    """The six algorithms measured as on the emulated cluster: three rounds of
    launches, each launch moving every time it measures by exp(N(0, 0.1²))."""
    rng = np.random.default_rng(seed)

    def measure(plan, catalog, jobs, samples, repeat=1, say=print):
        for r in range(3):
            for c, pairs in jobs.items():
                for name, sizes in pairs:
                    shift = math.exp(rng.normal(0, launch_sd))
                    for s in sizes:
                        alg = name if name != DEFAULT else (
                            "recursive_doubling" if s < 10000 else "ring")
                        samples.add(c, name, s, shift * FOUR[alg](s, plan.np) *
                                    rng.lognormal(0, 0.03, 40), launch=(id(jobs), r, name))
    return SIX, Served(measure)


def test_cost_models_leave_out_cells_and_keep_the_decisions():
    """Eight tunes with and without the models' pruning. The library's default
    is the best algorithm at every size but one (16 KiB, where recursive
    doubling is 3% faster than its ring), so the right decision is the
    default nearly everywhere."""
    measured = {None: 0, 0.25: 0}
    kept = {None: 0, 0.25: 0}
    skipped = 0
    for seed in range(8):
        for margin in measured:
            t = tuner(*six_with_launches(seed), model_prune=margin)
            t.search()
            c = t.cell_counts()
            measured[margin] += c["measured"]
            kept[margin] += sum(t.decisions.winners[("allreduce", s)] == DEFAULT for s in GRID)
            if margin:
                skipped += c["skipped_by_models"]
                fitted = {(s, n) for n, fs in t.searcher.fits["allreduce"].items() for s, _ in fs}
                assert t.searcher.model_skipped["allreduce"] <= fitted    # left out where fitted only
                assert not t.searcher.model_skipped["allreduce"] & t.measured.cells["allreduce"]
    assert skipped > 0 and measured[0.25] < measured[None] <= 0.5 * 8 * 18 * 7
    assert all(k >= 0.95 * 8 * len(GRID) for k in kept.values()), kept


def test_fits_recover_a_cost_model_and_say_who_is_out_of_the_race():
    from mpiscope import mpilibs
    from mpiscope.models.costmodels import Costs, predict_time
    from mpiscope.tune import model_fits as P

    names = mpilibs.get("openmpi").model_names
    costs = Costs.hockney(50e-6, 1e-8)
    sizes = [8, 2048, 262144]
    meds = {s: predict_time("bcast", "binomial", s, 8, costs) for s in sizes}
    f = P.fit("bcast", "binomial", 8, meds, names)
    assert f.model == "binomial" and f.residual < 1e-9
    assert f.alpha == pytest.approx(50e-6) and f.beta == pytest.approx(1e-8)
    assert f.predict(65536) == pytest.approx(predict_time("bcast", "binomial", 65536, 8, costs))
    assert P.fit("bcast", "binomial", 8, {8: 1e-4, 64: 2e-4}, names) is None   # two sizes: no residual
    line = P.fit("bcast", "chain", 8, {8: 1e-4, 1024: 2e-4, 4096: 5e-4}, names)  # no model: a line
    assert line.model == "hockney line" and line.residual > 0
    # binomial against a line twice as slow everywhere: out, with a margin below 2x
    slow = P.Fit("bcast", "chain", 8, 2 * 3 * f.alpha, 2 * 3 * f.beta, 0.0, "hockney line")  # lg 8 = 3
    assert P.out_of_race({"binomial": f, "chain": slow}, 8, 0.25) == {"chain"}
    assert P.out_of_race({"binomial": f, "chain": slow}, 8, 1.5) == set()


# ------------------------------------------------ noisy launches (search.could_win)

def noisy_store(seed, launches=3):
    """Every (algorithm, size) cell of FOUR on 8 ranks measured in advance,
    `launches` launches each; every launch moves all its times by a common
    factor, exp(N(0, 1)) below 1 KiB (as the emulated cluster's launches of
    small collectives) and exp(N(0, 0.02)) above. The default is recursive
    doubling below 10 KB, ring above."""
    rng = np.random.default_rng(seed)
    store = {}
    for name in [DEFAULT, *FOUR]:
        for s in GRID:
            alg = name if name != DEFAULT else ("recursive_doubling" if s < 10000 else "ring")
            sd = 1.0 if s < 1024 else 0.02
            store[(name, s)] = [FOUR[alg](s, 8) * math.exp(rng.normal(0, sd)) *
                                rng.lognormal(0, 0.03, 40) for _ in range(launches)]
    return store


def served(store):
    """Launches serving the stored launches, as bench/tune_search_replay.py."""
    def measure(plan, catalog, jobs, samples, repeat=1, say=print):
        for c, pairs in jobs.items():
            for name, sizes in pairs:
                for s in sizes:
                    for k, values in enumerate(store[(name, s)]):
                        samples.add(c, name, s, values, launch=(name, s, k))
    return SIX, Served(measure)


def test_noisy_small_sizes_are_measured_less_and_decided_as_the_exhaustive(monkeypatch):
    """On the same stored launches: the exhaustive search, the adaptive one,
    and the adaptive one without the out-of-reach rule."""
    def tune(adaptive):
        t = tuner(*served(store), adaptive=adaptive)
        t.search()
        return t

    fewer = 0   # over the four seeds: one seed's search may measure more with the rule
    for seed in range(4):
        store = noisy_store(seed)
        full, adap = tune(False), tune(True)
        same = sum(full.decisions.winners[("allreduce", s)] == adap.decisions.winners[("allreduce", s)] for s in GRID)
        assert same >= 0.95 * len(GRID), seed
        assert adap.cell_counts()["measured"] < 0.6 * full.cell_counts()["measured"]
        # where launches agree (from 1 KiB), nothing truly 10% faster than the default was left out
        default = lambda s: FOUR["recursive_doubling" if s < 10000 else "ring"](s, 8)
        assert all(FOUR[n](s, 8) > default(s) / 1.1 for s, n in adap.searcher.out_of_reach["allreduce"] if s >= 1024)
        monkeypatch.setattr(adaptive_search, "could_win", lambda *a: True)
        without = tune(True)
        monkeypatch.undo()
        fewer += without.cell_counts()["measured"] - adap.cell_counts()["measured"]
    assert fewer >= 10


def test_could_win_needs_the_speedup_the_default_launch_spread_demands():
    from mpiscope.tune.cell_samples import Samples
    from mpiscope.tune.search import could_win, lower_bound

    def cell(default_spread, x_below):
        s = Samples()
        for k, f in enumerate((1.0, default_spread, 1 / default_spread)):
            s.add("bcast", DEFAULT, 64, np.full(9, 1e-4 * f), launch=("d", k))
            s.add("bcast", "x", 32, np.full(9, x_below * (1 + 0.01 * k)), launch=("x", k))
        return s

    def can(s):
        return could_win(s, "bcast", 64, lower_bound(s, "bcast", 64, "x", 32, None), 3, 6, 0.05, 0.02)
    # the default's launches within 2%: an algorithm twice as fast one size below could win
    assert can(cell(1.02, 0.5e-4))
    # ... one as fast as the default there could not (it would need > 2%)
    assert not can(cell(1.02, 1e-4))
    # launches 3x apart: even twice as fast is out of reach
    assert not can(cell(3.0, 0.5e-4))
    # too few launches of the default to tell, or no bound: it could
    one = Samples()
    one.add("bcast", DEFAULT, 64, np.full(9, 1e-4), launch=1)
    one.add("bcast", "x", 32, np.full(9, 1e-4), launch=2)
    assert can(one)
    assert could_win(cell(1.02, 1e-4), "bcast", 64, None, 3, 6, 0.05, 0.02)


def test_lower_bound_from_both_sides_the_larger():
    from mpiscope.tune.cell_samples import Samples
    from mpiscope.tune.search import PER_BYTE_SLACK, lower_bound

    s = Samples()
    for k, f in enumerate((1.0, 1.1)):
        s.add("bcast", "x", 32, np.full(9, 1e-4 * f), launch=("lo", k))
        s.add("bcast", "x", 256, np.full(9, 1.2e-3 * f), launch=("hi", k))
    # time does not fall with the size: at least the fastest launch at 32 B
    assert math.exp(lower_bound(s, "bcast", 64, "x", 32, None)) == pytest.approx(1e-4)
    # time per byte does not grow (but for the slack): at least 64/256 of the
    # fastest launch at 256 B
    slack = 1 - PER_BYTE_SLACK
    assert math.exp(lower_bound(s, "bcast", 64, "x", None, 256)) == pytest.approx(3e-4 * slack)
    assert math.exp(lower_bound(s, "bcast", 64, "x", 32, 256)) == pytest.approx(3e-4 * slack)
    assert math.exp(lower_bound(s, "bcast", 128, "x", 32, 256)) == pytest.approx(6e-4 * slack)
    assert lower_bound(s, "bcast", 64, "x", None, None) is None
    assert lower_bound(s, "bcast", 64, "x", 16, None) is None        # not measured at 16


def test_an_algorithm_out_of_reach_is_beaten_only_below_its_bound():
    from mpiscope.tune.cell_samples import Samples
    from mpiscope.tune.search import Judge, blocking, resolved

    s = Samples()
    for k, f in enumerate((1.0, 1.05)):
        s.add("bcast", DEFAULT, 64, np.full(9, 1e-4 * f), launch=("d", k))
        s.add("bcast", "w", 64, np.full(9, 1e-4 * f), launch=("w", k))
    bounds = {(64, "x"): math.log(1.2e-4)}
    j = Judge(s, "bcast", np.random.default_rng(0), 0.05, bounds=bounds)
    assert j.faster(64, "w", "x", 0.10)          # w's slowest launch 1.05e-4 < 0.9 * 1.2e-4
    assert not j.faster(64, "w", "x", 0.15)      # ... not below 0.85 * 1.2e-4
    bounds[(64, "x")] = math.log(1.1e-4)
    assert not j.faster(64, "w", "x", 0.10)
    # an interval whose only obstacle is x out of reach at an end: x is what to measure there
    for size in (128,):
        for k, f in enumerate((1.0, 1.05)):
            for n in (DEFAULT, "w", "x"):
                t = 3e-4 if n == "x" else 2e-4
                s.add("bcast", n, size, np.full(9, t * f), launch=(n, size, k))
    winners, keep = {64: DEFAULT, 128: DEFAULT}, [DEFAULT, "w", "x"]
    bounds[(64, "x")] = math.log(1.05e-4)       # w not beyond noise below it
    assert not resolved(j, 64, 128, winners, keep, 0.02)
    assert blocking(j, 64, 128, winners, keep, 0.02) == [(64, "x")]
    assert not j.hopeful
