# SPDX-License-Identifier: BSD-3-Clause
"""Speedups of an application's configurations against the default, the
launch as the unit (stats/speedup.py), on synthetic launches whose medians,
speedups and verdicts are computed here by hand; the stopping rule and the
order of rounds (app/schedule.py); the answer from stored launches
(app/answer.py)."""

import math

import numpy as np
import pytest

from mpiscope.app.answer import summarize
from mpiscope.app.schedule import (CI_REACHED, MAX_ROUNDS, NO_BASELINE, NO_OTHER, TIME_BUDGET, StopRule, active,
                                   decide, describe_stop)
from mpiscope.common.errors import UsageError
from mpiscope.stats.compare import FASTER, INSUFFICIENT, SAME, SLOWER, compare_samples
from mpiscope.stats.speedup import BASELINE, NO_VALUE, narrow_enough, speedups

# Six launches each: the fewest the Mann-Whitney test needs at alpha 0.05
# (its smallest two-sided p at 6 against 6 is 2 / C(12, 6) = 0.0022).
DEFAULT = [10.0, 11.0, 12.0, 10.5, 11.5, 10.8]   # sorted 10, 10.5, 10.8, 11, 11.5, 12: median 10.9
FAST = [5.0, 5.2, 5.4, 5.1, 5.3, 5.45]           # sorted 5, 5.1, 5.2, 5.3, 5.4, 5.45: median 5.25
SLOW = [20.0, 21.0, 22.0, 23.0, 24.0, 25.0]      # median 22.5


def by_name(results):
    return {r.config: r for r in results}


def test_medians_speedups_and_verdicts_by_hand():
    r = by_name(speedups({"default": DEFAULT, "fast": FAST, "slow": SLOW, "twin": list(DEFAULT)}, "default"))
    assert r["default"].verdict == BASELINE and r["default"].speedup is None
    assert r["default"].median == pytest.approx(10.9) and r["default"].n == 6
    assert r["fast"].median == pytest.approx(5.25)
    assert r["fast"].speedup.point == pytest.approx(10.9 / 5.25)
    assert r["slow"].speedup.point == pytest.approx(10.9 / 22.5)
    # Every fast launch beats every default one: the exact two-sided p is 2 / 924.
    assert r["fast"].p_value == pytest.approx(2 / math.comb(12, 6))
    assert r["fast"].verdict == FASTER and r["slow"].verdict == SLOWER
    assert r["twin"].speedup.point == 1.0 and r["twin"].verdict == SAME
    for name in ("fast", "slow", "twin"):
        s = r[name].speedup
        assert s.low <= s.point <= s.high and s.level == 0.95


def test_the_interval_is_compares_time_ratio_inverted():
    """speedup = 1 / (config / default): the same bootstrap as `compare`, seeded alike."""
    s = by_name(speedups({"default": DEFAULT, "fast": FAST}, "default", seed=7))["fast"].speedup
    ratio, p, verdict, _ = compare_samples(DEFAULT, FAST, np.random.default_rng(7))
    assert (s.low, s.high) == pytest.approx((1 / ratio.high, 1 / ratio.low))
    assert verdict == FASTER


def test_the_practical_threshold_decides_a_small_sure_change():
    """1% faster in every launch: p is tiny, but the whole interval stays
    inside the 2% noise band (same); with a 0.5% band it is outside (faster)."""
    base = [100 + 0.01 * i for i in range(8)]
    config = [99 + 0.01 * i for i in range(8)]
    wide = by_name(speedups({"default": base, "c": config}, "default", noise=0.02))["c"]
    assert wide.p_value == pytest.approx(2 / math.comb(16, 8)) and wide.verdict == SAME
    assert 1.0 / 1.02 < wide.speedup.low and wide.speedup.high < 1.02
    narrow = by_name(speedups({"default": base, "c": config}, "default", noise=0.005))["c"]
    assert narrow.verdict == FASTER and narrow.speedup.low > 1 / 0.995


def test_too_few_launches_or_none():
    r = by_name(speedups({"default": DEFAULT[:5], "fast": FAST[:5], "none": []}, "default"))
    # Five launches: medians 11 (10, 10.5, 11, 11.5, 12) and 5.2 (5, 5.1, 5.2, 5.3, 5.4).
    assert r["fast"].verdict == INSUFFICIENT and r["fast"].speedup.point == pytest.approx(11.0 / 5.2)
    assert r["none"].verdict == NO_VALUE and r["none"].speedup is None and math.isnan(r["none"].median)
    # No valid default: nothing has a speedup.
    r = by_name(speedups({"default": [], "fast": FAST}, "default"))
    assert r["fast"].verdict == NO_VALUE and r["fast"].median == pytest.approx(5.25)


def test_narrow_enough_needs_a_verdict_and_a_narrow_interval():
    steady = [1.0 + 0.001 * i for i in range(8)]
    faster = [0.5 + 0.0005 * i for i in range(8)]
    results = speedups({"default": steady, "a": faster}, "default")
    assert by_name(results)["a"].speedup.relative_halfwidth() < 0.01
    assert narrow_enough(results, 0.02)
    assert not narrow_enough(results, 1e-5)
    noisy = speedups({"default": steady, "a": [0.5, 0.9, 0.3, 1.2, 0.6, 0.4, 0.8, 1.1]}, "default")
    assert not narrow_enough(noisy, 0.02)
    few = speedups({"default": steady[:4], "a": faster[:4]}, "default")
    assert by_name(few)["a"].verdict == INSUFFICIENT and not narrow_enough(few, 0.5)
    assert not narrow_enough(speedups({"default": steady}, "default"), 0.02)  # nothing to judge


# ------------------------------------------------------------ the stopping rule

RULE = StopRule(ci_width=0.02, time_budget=100.0, min_rounds=3, max_rounds=10, warmup=1)


def results(default=DEFAULT, other=FAST):
    return speedups({"default": default, "other": other}, "default")


def test_no_stop_before_min_rounds_whatever_else():
    assert decide(RULE, 2, 1e6, [50.0, 50.0], results([], []), "default") is None


def test_stops_when_every_interval_is_narrow():
    steady = [1.0 + 0.001 * i for i in range(6)]
    assert decide(RULE, 6, 10.0, [1.0] * 6, results(steady, [0.5 + 0.0005 * i for i in range(6)]),
                  "default") == CI_REACHED
    # Wide intervals: go on, until the rounds or the time run out.
    wide = results(steady, [0.5, 0.9, 0.3, 1.2, 0.6, 0.4])
    assert decide(RULE, 6, 10.0, [1.0] * 6, wide, "default") is None
    assert decide(RULE, 10, 10.0, [1.0] * 10, wide, "default") == MAX_ROUNDS
    # Rounds of 20 s against a budget of 100 s: after 60 s another ends at 80 s; after
    # 81 s another would end at 101 s.
    assert decide(RULE, 3, 60.0, [20.0] * 3, wide, "default") is None
    assert decide(RULE, 4, 81.0, [20.0] * 4, wide, "default") == TIME_BUDGET


def test_stops_without_a_valid_baseline_or_other():
    assert decide(RULE, 3, 1.0, [0.1] * 3, results([], FAST), "default") == NO_BASELINE
    assert decide(RULE, 3, 1.0, [0.1] * 3, results(DEFAULT, []), "default") == NO_OTHER


def test_a_configuration_with_no_valid_launch_is_dropped_after_min_rounds():
    names = ["default", "a", "broken"]
    valid = {"default": 3, "a": 2, "broken": 0}
    assert active(names, "default", 2, RULE, valid) == names
    assert active(names, "default", 3, RULE, valid) == ["default", "a"]
    assert active(names, "default", 3, RULE, {"default": 0, "a": 1, "broken": 0}) == ["default", "a"]


@pytest.mark.parametrize("rule, needle", [
    (StopRule(ci_width=0), "--ci-width"), (StopRule(ci_width=-0.1), "--ci-width"),
    (StopRule(time_budget=0), "--time-budget"), (StopRule(min_rounds=0), "--min-rounds"),
    (StopRule(min_rounds=5, max_rounds=4), "--max-rounds 4 is below --min-rounds 5"),
    (StopRule(warmup=-1), "--warmup"),
])
def test_bad_rules_are_refused(rule, needle):
    with pytest.raises(UsageError, match=needle):
        rule.check()


def test_every_stop_is_said_in_words():
    options = vars(RULE)
    for stop in (CI_REACHED, MAX_ROUNDS, TIME_BUDGET, NO_BASELINE, NO_OTHER):
        assert "{" not in describe_stop(stop, options)
    assert "±0.02" in describe_stop(CI_REACHED, options)
    assert "before the end" in describe_stop(None, options)


# ------------------------------------------------------------ the answer from launches

def launch(index, config, round_, wall, status="ok", warmup=False, metric=None):
    return {"index": index, "config": config, "round": round_, "warmup": warmup, "wall_s": wall,
            "metric": metric, "exit_code": 0 if status == "ok" else 1, "status": status,
            "reason": None if status == "ok" else "exit code 1: boom"}


def test_the_answer_counts_names_and_skips_warm_up():
    stored = [launch(0, "default", 1, 99.0, warmup=True), launch(1, "fast", 1, 0.1, "failed", warmup=True)]
    k = 2
    for r, (d, f) in enumerate(zip(DEFAULT, FAST), 1):
        stored += [launch(k, "default", r, d), launch(k + 1, "fast", r, f)]
        k += 2
    stored += [launch(k, "default", 7, 1.0, "failed"), launch(k + 1, "fast", 7, 5.0, "metric-missing")]
    options = {"noise": 0.02, "alpha": 0.05, "level": 0.95, "seed": 1, "n_boot": 500}
    a = summarize(stored, ["default", "fast"], "default", options, with_metric=False)
    assert a["rounds"] == 7 and a["launches"] == len(stored)
    rows = {r["config"]: r for r in a["results"]}
    assert rows["default"]["median"] == pytest.approx(10.9)       # the warm-up's 99 s left out
    assert rows["fast"]["speedup"]["point"] == pytest.approx(10.9 / 5.25)
    assert (rows["default"]["launches"], rows["default"]["failed"], rows["default"]["n"]) == (7, 1, 6)
    assert (rows["fast"]["failed"], rows["fast"]["metric_missing"]) == (0, 1)
    assert [x["index"] for x in a["failed_launches"]] == [1, k, k + 1]
    assert a["failed_launches"][0]["warmup"] and a["failed_launches"][2]["status"] == "metric-missing"
    # With --metric the metric is the value, not the wall time.
    with_metric = [dict(x, metric=x["wall_s"] * 2) for x in stored]
    m = summarize(with_metric, ["default", "fast"], "default", options, with_metric=True)
    assert {r["config"]: r for r in m["results"]}["default"]["median"] == pytest.approx(21.8)


# ------------------------------------------------------------ the answer as text

def test_the_text_names_every_result_failure_and_the_prediction():
    from mpiscope.views.app import format_app, not_counted

    stored = [launch(k, name, r, v) for r, (d, f) in enumerate(zip(DEFAULT, FAST), 1)
              for k, name, v in ((2 * r, "default", d), (2 * r + 1, "fast", f))]
    stored.append(launch(99, "fast", 7, 1.0, "failed"))
    options = {"noise": 0.02, "alpha": 0.05, "level": 0.95, "seed": 1, "n_boot": 200, **vars(RULE)}
    answer = summarize(stored, ["default", "fast"], "default", options, with_metric=False)
    measured = {r["config"]: r for r in answer["results"]}["fast"]["speedup"]
    cell = {"collective": "allreduce", "comm_size": 4, "lo": 1024, "hi": 2047, "share": 0.25}
    prediction = {"config": "fast", "profile": "p1", "tune": "/t", "measured": measured, "speedup": 1.5,
                  "low": 1.4, "high": 1.6, "collective_share": 0.4, "agree": False,
                  "explanation": {"direction": "measured above prediction", "gap_share": 0.3,
                                  "carrying": [{**cell, "share_of_gain": 0.8}], "unchanged": [cell]}}
    doc = {"run_id": "r", "status": "completed", "error": None, "command": ["mpirun", "./app"],
           "value": {"metric": None}, "configs": [{}, {}], "options": options, "stop": "max-rounds",
           "prediction": prediction, **answer}
    text = format_app(doc)
    assert "stopped: --max-rounds 10 rounds were done" in text
    assert "fast" in text and "faster" in text and "baseline" in text
    assert "predicted speedup of fast (profile p1, tune /t): 1.500 [1.400, 1.600], 40.0% of the time" in text
    assert "they do not agree" in text and "measured above prediction by 30.0%" in text
    assert "carries 80% of the predicted gain: allreduce on 4 ranks, 1024-2047 B, 25.0% of the time" in text
    assert not_counted(doc) == ["launch 99 (fast, round 7): failed: exit code 1: boom"]
    assert "launch 99 (fast, round 7): failed: exit code 1: boom (launch-99.stderr)" in text
