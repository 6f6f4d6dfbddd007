# SPDX-License-Identifier: BSD-3-Clause
"""Bootstrap confidence intervals of percentiles (mpiscope.stats.bootstrap)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpiscope.stats.bootstrap import (median_estimate, percentile_estimate, percentile_of_sorted,
                                percentile_replicates)

finite = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False)
samples = st.lists(finite, min_size=1, max_size=200)
percents = st.sampled_from([0.0, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 100.0])


def test_point_is_numpy_percentile():
    x = [10, 1, 9, 2, 8, 3, 7, 4, 6, 5]
    assert median_estimate(x).point == 5.5
    # Linear interpolation: p90 at position 0.9 * 9 = 8.1 -> 9.1.
    assert percentile_estimate(x, 90).point == pytest.approx(9.1)
    for p in (0, 12.5, 50, 77.7, 100):
        assert percentile_of_sorted(np.sort(x).astype(float), p) == pytest.approx(
            np.percentile(x, p))


def test_constant_sample_has_zero_width():
    e = median_estimate([3.25] * 50, seed=9)
    assert (e.point, e.low, e.high, e.stderr) == (3.25, 3.25, 3.25, 0.0)


def test_method_records_resamples_and_seed():
    e = percentile_estimate(range(100), 90, seed=42, n_boot=500)
    assert e.method == "bootstrap-percentile (500 resamples, seed 42)"
    assert e.level == 0.95


def test_no_values_give_nan_and_nans_are_ignored():
    e = median_estimate([])
    assert math.isnan(e.point) and math.isnan(e.low) and math.isnan(e.high)
    assert median_estimate([np.nan, 1.0, 2.0, 3.0, np.nan]) == median_estimate([1.0, 2.0, 3.0])


def test_bad_arguments():
    with pytest.raises(ValueError):
        percentile_estimate([1, 2, 3], 101)
    with pytest.raises(ValueError):
        median_estimate([1, 2, 3], level=1.0)
    with pytest.raises(ValueError):
        median_estimate([1, 2, 3], seed=-1)


def test_same_seed_same_result_other_seed_differs():
    x = np.random.default_rng(0).lognormal(0.0, 1.0, 500)
    assert median_estimate(x, seed=7) == median_estimate(x, seed=7)
    assert median_estimate(x, seed=7) != median_estimate(x, seed=8)
    # A percentile's stream depends on the seed and the percentile only.
    assert np.array_equal(percentile_replicates(x, 90, 300, seed=7),
                          percentile_replicates(list(x), 90.0, 300, seed=7))


def test_interval_width_matches_theory_for_normal_data():
    # The median of n normal values has sd ~ sqrt(pi/2) / sqrt(n).
    x = np.random.default_rng(1).standard_normal(10000)
    e = median_estimate(x, seed=3)
    assert e.stderr == pytest.approx(math.sqrt(math.pi / 2) / 100, rel=0.15)
    assert e.high - e.low == pytest.approx(2 * 1.96 * e.stderr, rel=0.15)


def _direct_replicates(x, percent, n_boot, rng):
    idx = rng.integers(0, len(x), size=(n_boot, len(x)))
    return np.percentile(np.asarray(x)[idx], percent, axis=1)


@pytest.mark.parametrize("percent", [50.0, 37.5, 90.0])
def test_order_statistic_draws_match_direct_resampling(percent):
    # Small sample with ties: every distinct replicate value is visible, so
    # the two distributions are compared value by value.
    x = [1.0, 2.0, 2.0, 3.0, 5.0, 8.0, 13.0, 13.0, 21.0, 34.0]
    n_boot = 40000
    ours = percentile_replicates(x, percent, n_boot, seed=5)
    direct = _direct_replicates(x, percent, n_boot, np.random.default_rng(6))
    values = np.union1d(np.round(ours, 9), np.round(direct, 9))
    p_ours = np.array([np.mean(np.round(ours, 9) == v) for v in values])
    p_direct = np.array([np.mean(np.round(direct, 9) == v) for v in values])
    assert np.max(np.abs(p_ours - p_direct)) < 0.012
    assert ours.mean() == pytest.approx(direct.mean(), rel=0.01)


def test_a_million_values():
    x = np.random.default_rng(2).lognormal(-7.0, 0.5, 1_000_000)
    e = median_estimate(x, seed=1)
    assert e.low < e.point < e.high
    assert e.relative_halfwidth() < 0.005


@settings(max_examples=200, deadline=None)
@given(samples, percents, st.integers(min_value=0, max_value=2 ** 32))
def test_ci_contains_point(values, percent, seed):
    e = percentile_estimate(values, percent, seed=seed, n_boot=400)
    assert e.low <= e.point <= e.high
    assert min(values) <= e.low and e.high <= max(values)
    assert e.stderr >= 0


@settings(max_examples=100, deadline=None)
@given(finite, st.integers(min_value=1, max_value=300), percents, st.integers(0, 1000))
def test_constant_sample_property(value, n, percent, seed):
    e = percentile_estimate([value] * n, percent, seed=seed, n_boot=100)
    assert e.point == e.low == e.high == value
    assert e.stderr == 0.0


@settings(max_examples=50, deadline=None)
@given(samples, percents, st.integers(min_value=0, max_value=2 ** 32))
def test_reproducible(values, percent, seed):
    assert percentile_estimate(values, percent, seed=seed, n_boot=200) == \
        percentile_estimate(values, percent, seed=seed, n_boot=200)
