# SPDX-License-Identifier: BSD-3-Clause
"""Launch as the unit (stats/launch_compare.py) on synthetic data with a known
launch effect: every launch multiplies all its times by exp(b), b ~ N(0,
0.1²) — the ±25% seen launch to launch on the emulated cluster — around
3% noise inside a launch. Pooled samples (compare.py's rule, the tuner's
old one) then give false verdicts between identical algorithms; the
launch-level rule must not, and must still find a real difference."""

import math

import numpy as np
import pytest

from mpiscope.mpilibs.algorithm_catalog import DEFAULT
from mpiscope.stats.compare import FASTER, INSUFFICIENT, SAME, SLOWER, compare_samples
from mpiscope.stats.launch_compare import compare_launches, pooled_variance
from mpiscope.tune import verdicts as V
from mpiscope.tune.decide import LAUNCH, SAMPLE, decide
from mpiscope.tune.cell_samples import Samples

LAUNCH_SD, WITHIN_SD, PER_LAUNCH, LAUNCHES = 0.10, 0.03, 200, 3


def launches(rng, t, n=LAUNCHES):
    return [t * math.exp(rng.normal(0, LAUNCH_SD)) * rng.lognormal(0, WITHIN_SD, PER_LAUNCH)
            for _ in range(n)]


def cell(rng, times):
    """{name: per-launch arrays} for one cell, every algorithm in its own launches."""
    return {name: launches(rng, t) for name, t in times.items()}


SIX_SAME = {n: 1e-4 for n in ("a", "b", "c", "d", "e", "f")}


def test_identical_algorithms_fool_the_pooled_rule_not_the_launch_rule():
    old = new = 0
    trials = 100
    for seed in range(trials):
        rng = np.random.default_rng(seed)
        g = cell(rng, SIX_SAME)
        pooled = compare_samples(np.concatenate(g["a"]), np.concatenate(g["b"]), rng,
                                 n_boot=300)[2]
        old += pooled in (FASTER, SLOWER)
        new += compare_launches(g["a"], g["b"], list(g.values())).verdict in (FASTER, SLOWER)
    # the pooled rule calls most pairs of identical algorithms different ...
    assert old >= 0.5 * trials
    # ... the launch rule at most as often as its 5% level allows
    assert new <= 0.05 * trials


def test_a_real_difference_is_found_over_launches():
    found = 0
    for seed in range(50):
        rng = np.random.default_rng(1000 + seed)
        g = cell(rng, {**SIX_SAME, "b": 1e-4 / 1.5})
        v = compare_launches(g["a"], g["b"], list(g.values()))
        found += v.verdict == FASTER
        assert v.verdict != SLOWER
    assert found >= 45


def test_interval_is_a_t_interval_with_the_pooled_variance():
    a = [np.full(5, 1.0), np.full(5, math.e ** 0.1)]
    b = [np.full(5, math.e ** -1), np.full(5, math.e ** -0.9)]
    v = compare_launches(a, b)
    var, df = pooled_variance([np.log([1.0, math.e ** 0.1]), [-1.0, -0.9]])
    assert df == 2 and var == pytest.approx(0.005)
    assert v.ratio.point == pytest.approx(math.exp(-1.0))
    half = 4.302652729911275 * math.sqrt(0.005 * (0.5 + 0.5))   # t(0.975, 2)
    assert math.log(v.ratio.high) - math.log(v.ratio.point) == pytest.approx(half, rel=1e-6)
    assert v.verdict == FASTER and v.every_launch


def test_a_winner_must_win_in_every_launch():
    # B is faster on average and the t test is sure, but one launch of B is
    # slower than one of A: no verdict
    a = [np.full(9, x) for x in (1.00, 1.01, 1.02, 0.70)]
    b = [np.full(9, x) for x in (0.60, 0.61, 0.62, 0.71)]
    pool = [[np.full(9, x) for x in (2.0, 2.001, 2.002, 2.003)]] * 20   # low launch variance
    v = compare_launches(a, b, pool + [a, b])
    assert v.p_value < 0.05 and v.ratio.high < 0.98
    assert not v.every_launch and v.verdict == SAME


def test_one_launch_each_has_no_launch_verdict():
    v = compare_launches([np.ones(9)], [np.ones(9) * 0.5])
    assert v.verdict == INSUFFICIENT and v.df == 0


def samples_from(g):
    s = Samples()
    for k in range(LAUNCHES):       # interleaved rounds, one launch per algorithm
        for name, ls in g.items():
            s.add("allreduce", name, 64, ls[k], launch=(k, name))
    return s


def test_decide_keeps_the_default_against_identical_algorithms_over_launches():
    wrong = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        g = cell(rng, {DEFAULT: 1e-4, **SIX_SAME})
        winner, rows = decide(samples_from(g), "allreduce", 64, [DEFAULT, *SIX_SAME], rng,
                              0.02, 0.05)
        assert all(r.get("unit", LAUNCH) == LAUNCH for r in rows)
        assert all(r["launches"] == LAUNCHES for r in rows)
        wrong += winner != DEFAULT
    assert wrong <= 2


def test_decide_with_one_launch_falls_back_to_pooled_samples():
    rng = np.random.default_rng(5)
    s = Samples()
    s.add("bcast", DEFAULT, 8, rng.lognormal(0, 0.03, 50) * 2e-5)
    s.add("bcast", "binomial", 8, rng.lognormal(0, 0.03, 50) * 1e-5)
    winner, rows = decide(s, "bcast", 8, [DEFAULT, "binomial"], rng, 0.02, 0.05)
    assert winner == "binomial" and rows[1]["unit"] == SAMPLE


def test_verification_speedup_interval_over_launches():
    calls = {"old": 0, "new": 0}
    for seed in range(60):
        rng = np.random.default_rng(seed)
        g = cell(rng, {"default": 1e-4, "tuned": 1e-4})    # the file changed nothing
        pool = list(cell(rng, SIX_SAME).values())            # the tune's own launches at the cell
        old = V.speedup_row(np.concatenate(g["default"]), np.concatenate(g["tuned"]), rng,
                            0.02, 0.05, n_boot=300)
        new = V.speedup_row(g["default"], g["tuned"], rng, 0.02, 0.05, pool=pool)
        assert old["unit"] == SAMPLE and new["unit"] == LAUNCH and new["launches"] == [3, 3]
        assert new["speedup_low"] <= new["speedup"] <= new["speedup_high"]
        calls["old"] += old["verdict"] == "tuned slower"
        calls["new"] += new["verdict"] == "tuned slower"
    assert calls["old"] >= 10 and calls["new"] <= 2


def test_an_erratic_algorithm_does_not_blur_the_others():
    # at 32 KiB bcast (measured): default and binomial steady over launches, one
    # other algorithm's launches 15x apart
    default = [np.full(9, 19761e-6), np.full(9, 19278e-6)]
    binomial = [np.full(9, 8582e-6), np.full(9, 8683e-6)]
    erratic = [np.full(9, 8296e-6), np.full(9, 552e-6)]
    steady = [[np.full(9, x * 1e-6), np.full(9, x * 1.01e-6)] for x in (5000, 7000, 9000)]
    v = compare_launches(default, binomial, [default, binomial, erratic, *steady])
    assert v.verdict == FASTER and v.ratio.high < 0.5


def test_launches_that_agree_by_chance_get_the_cells_typical_variance():
    a = [np.full(9, 1.0), np.full(9, 1.0)]
    b = [np.full(9, 0.9), np.full(9, 0.9)]          # no spread at all: alone, a sure 10%
    assert compare_launches(a, b).verdict == FASTER
    typical = [[np.full(9, 1.0), np.full(9, 1.3)]] * 5  # the machine: ±30% launch to launch
    v = compare_launches(a, b, [a, b, *typical])
    assert v.verdict == SAME and v.ratio.low < 0.9 < v.ratio.high


def test_decide_tests_every_algorithm_in_the_race_not_only_those_measured():
    """The adaptive search leaves algorithms out of a cell; the winner must
    still be tested at alpha / k over all k of them, as in the exhaustive
    tune, or the same launches give another winner."""
    s = Samples()
    for k, x in enumerate((1.00, 1.07, 0.93)):
        s.add("allreduce", DEFAULT, 64, np.full(9, x * 1e-4), launch=(k, DEFAULT))
        s.add("allreduce", "a", 64, np.full(9, 0.8 * x * 1e-4), launch=(k, "a"))
    rng = np.random.default_rng(0)
    winner, rows = decide(s, "allreduce", 64, [DEFAULT, "a"], rng, 0.02, 0.05)
    assert winner == "a" and 0.05 / 6 < rows[1]["p_value"] < 0.05
    winner, _ = decide(s, "allreduce", 64, [DEFAULT, "a"], rng, 0.02, 0.05, family=6)
    assert winner == DEFAULT


def test_a_decision_does_not_depend_on_which_other_algorithms_were_measured():
    """The adaptive search measures fewer algorithms at a cell than an
    exhaustive tune: the verdict of one against the default must come out
    the same with or without the others' launches at the cell."""
    def verdicts(others):
        s = Samples()
        for k, x in enumerate((1.00, 1.04, 0.97)):
            s.add("allreduce", DEFAULT, 64, np.full(9, x * 1e-4), launch=(k, DEFAULT))
            s.add("allreduce", "a", 64, np.full(9, 0.85 * x * 1e-4), launch=(k, "a"))
        for name, spread in others.items():   # 1 +- spread from launch to launch
            for k, x in enumerate((1.0, 1.0 + spread, 1.0 - spread / 2)):
                s.add("allreduce", name, 64, np.full(9, x * 2e-4), launch=(k, name))
        _, rows = decide(s, "allreduce", 64, [DEFAULT, "a", *others], np.random.default_rng(0),
                         0.02, 0.05, family=4)
        return {r["algorithm"]: (r.get("verdict"), round(r.get("p_value", 0), 12)) for r in rows}

    alone = verdicts({})
    assert alone["a"][0] == FASTER
    for others in ({"b": 0.01, "c": 0.01, "d": 0.01}, {"b": 0.5, "c": 0.6, "d": 0.7}):
        assert verdicts(others)["a"] == alone["a"]
