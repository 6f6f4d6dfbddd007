# SPDX-License-Identifier: BSD-3-Clause
"""Moments, MAD, Tukey labels and describe() (mpiscope.stats.summary)."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpiscope.stats.estimate import Estimate
from mpiscope.stats.summary import (NORMAL_MAD_SCALE, describe, mad, mean_estimate, mean_var,
                            tukey_fences, tukey_labels)

finite = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False)


def test_mad_hand_computed():
    # median 3; |x - 3| = 2, 1, 0, 1, 97; their median is 1.
    assert mad([1, 2, 3, 4, 100]) == 1.0
    assert mad([1, 2, 3, 4, 100], scale=NORMAL_MAD_SCALE) == pytest.approx(1.4826, abs=1e-4)
    # Even n: median 2.5, deviations 1.5 0.5 0.5 1.5 -> 1.0.
    assert mad([4, 1, 3, 2]) == 1.0
    assert math.isnan(mad([]))


def test_mean_var_hand_computed():
    assert mean_var([1, 2, 3, 4, 5]) == (5, 3.0, 2.5)
    n, m, v = mean_var([7.0])
    assert (n, m) == (1, 7.0) and math.isnan(v)
    n, m, v = mean_var([np.nan])
    assert n == 0 and math.isnan(m) and math.isnan(v)


def test_mean_var_is_stable_far_from_zero():
    # 1e9 + (1, 2, 3, 4): the textbook E[x^2] - E[x]^2 loses every digit.
    n, m, v = mean_var(1e9 + np.array([1.0, 2.0, 3.0, 4.0]))
    assert m == 1e9 + 2.5
    assert v == pytest.approx(5.0 / 3.0, rel=1e-12)
    # Latencies of 1 s varying by 1 ns, a million of them.
    x = 1.0 + 1e-9 * np.tile([-1.0, 1.0], 500_000)
    n, m, v = mean_var(x)
    assert m == pytest.approx(1.0, abs=1e-15)
    assert math.sqrt(v) == pytest.approx(1e-9, rel=1e-6)


def test_mean_t_interval_hand_computed():
    # mean 3, sd sqrt(2.5), se sqrt(0.5); t(0.975, 4) = 2.7764451051977987.
    e = mean_estimate([1, 2, 3, 4, 5])
    half = 2.7764451051977987 * math.sqrt(0.5)
    assert e.point == 3.0
    assert e.stderr == pytest.approx(math.sqrt(0.5))
    assert (e.low, e.high) == (pytest.approx(3 - half), pytest.approx(3 + half))
    assert e.method == "t-interval" and e.level == 0.95
    one = mean_estimate([2.0])
    assert one.point == 2.0 and math.isnan(one.stderr) and math.isnan(one.low)
    flat = mean_estimate([2.0] * 5)
    assert (flat.low, flat.high, flat.stderr) == (2.0, 2.0, 0.0)


def test_tukey_hand_computed():
    # Q1 = 2, Q3 = 4, IQR = 2: inner fences -1 and 7, outer -4 and 10.
    f = tukey_fences([1, 2, 3, 4, 100])
    assert (f["q1"], f["q3"], f["iqr"]) == (2.0, 4.0, 2.0)
    assert (f["low_outlier"], f["high_outlier"], f["low_far"], f["high_far"]) == (-1, 7, -4, 10)
    assert tukey_labels([1, 2, 3, 4, 100]).tolist() == ["", "", "", "", "far"]
    # A value on a fence is inside; 9 is an outlier, not far; -5 is far.
    fences = tukey_fences([1, 2, 3, 4, 5])
    assert tukey_labels([7, 9, -5, np.nan, 3], fences).tolist() == \
        ["", "outlier", "far", "", ""]


def test_outliers_are_labelled_in_input_order_never_removed():
    x = [100, 1, 2, 3, 4]
    d = describe(x, seed=1)
    assert d["labels"].tolist() == ["far", "", "", "", ""]
    assert d["n"] == 5 and d["max"] == 100
    assert d["tukey"]["n_far"] == 1 and d["tukey"]["n_outlier"] == 0


def test_describe_hand_computed():
    d = describe([10, 1, 9, 2, 8, 3, 7, 4, 6, 5], seed=11)
    assert (d["n"], d["min"], d["max"]) == (10, 1.0, 10.0)
    for key in ("median", "mean", "p90", "p99"):
        assert isinstance(d[key], Estimate)
    assert d["median"].point == 5.5
    assert d["mean"].point == 5.5
    assert d["p90"].point == pytest.approx(9.1)
    assert d["p99"].point == pytest.approx(9.91)
    assert d["mad"] == 2.5
    assert d["sd"] == pytest.approx(math.sqrt(55 / 6))
    assert d["seed"] == 11 and "seed 11" in d["median"].method


def test_describe_empty_and_single():
    d = describe([], seed=1)
    assert d["n"] == 0 and math.isnan(d["min"]) and math.isnan(d["median"].point)
    assert len(d["labels"]) == 0
    d = describe([4.0], seed=1)
    assert d["median"].point == d["p99"].point == d["min"] == d["max"] == 4.0
    assert math.isnan(d["mean"].low)


def test_describe_reproducible():
    x = np.random.default_rng(4).lognormal(0, 1, 1000)
    a, b, c = describe(x, seed=5), describe(x, seed=5), describe(x, seed=6)
    for key in ("median", "p90", "p99"):
        assert a[key] == b[key]
    assert a["median"] != c["median"]


def test_describe_a_million_values():
    x = np.random.default_rng(3).lognormal(-9.0, 0.4, 1_000_000)
    d = describe(x, seed=1)
    assert d["n"] == 1_000_000
    assert d["min"] < d["median"].low < d["median"].point < d["median"].high < d["p90"].point
    assert len(d["labels"]) == 1_000_000


@settings(max_examples=100, deadline=None)
@given(st.lists(finite, min_size=1, max_size=200), st.integers(min_value=0, max_value=1000))
def test_describe_properties(values, seed):
    d = describe(values, seed=seed, n_boot=200)
    assert d["min"] <= d["median"].point <= d["p90"].point <= d["p99"].point <= d["max"]
    for key in ("median", "p90", "p99"):
        assert d[key].low <= d[key].point <= d[key].high
    assert d["mad"] >= 0
    far = d["labels"] == "far"
    out = d["labels"] == "outlier"
    assert far.sum() == d["tukey"]["n_far"] and out.sum() == d["tukey"]["n_outlier"]
    x = np.asarray(values)
    # Labels follow the fences exactly.
    t = d["tukey"]
    assert np.array_equal(far, (x < t["low_far"]) | (x > t["high_far"]))


@settings(max_examples=100, deadline=None)
@given(st.lists(finite, min_size=2, max_size=60))
def test_mean_var_against_exact_arithmetic(values):
    exact = [Fraction(v) for v in values]
    mean = sum(exact) / len(exact)
    var = sum((v - mean) ** 2 for v in exact) / (len(exact) - 1)
    n, m, v = mean_var(values)
    assert n == len(values)
    assert m == pytest.approx(float(mean), rel=1e-12, abs=1e-12 * max(map(abs, values)))
    # a variance below the normal range (subnormal) keeps no relative precision
    tiny = float(np.finfo(float).tiny)
    assert v == pytest.approx(float(var), rel=1e-9, abs=max(1e-20 * max(map(abs, values)) ** 2, tiny))
