# SPDX-License-Identifier: BSD-3-Clause
"""The median's confidence interval by order statistics and the summary of a
series (stats/summary.py): values computed by hand, small and empty series,
NaN ignored, and coverage (Hypothesis)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from mpiscope.stats.summary import median_ci, median_ci_ranks, summarize


def test_median_ci_of_1_to_20():
    # B ~ Binomial(20, 1/2): P(B <= 5) = 21700/2^20 = 0.0207 <= 0.025 < P(B <= 6) = 0.0577,
    # so the interval is (x_(6), x_(15)) with coverage 1 - 2 * 0.0207 = 0.9586.
    assert median_ci(range(1, 21)) == (6.0, 15.0)
    j, k, coverage = median_ci_ranks(20)
    assert (j, k) == (6, 15)
    assert coverage == pytest.approx(1 - 2 * 21700 / 2 ** 20)


def test_median_ci_other_levels_and_sizes():
    # n = 20 at 50%: P(B <= 7) = 137980/2^20 = 0.132 <= 0.25 < P(B <= 8) = 0.252.
    assert median_ci(range(1, 21), level=0.5) == (8.0, 13.0)
    # n = 10 at 95%: P(B <= 1) = 11/1024 <= 0.025 < P(B <= 2) = 56/1024.
    assert median_ci(range(1, 11)) == (2.0, 9.0)
    # n = 6 at 95%: P(B <= 0) = 1/64 <= 0.025, the widest interval is the CI.
    assert median_ci([6, 5, 4, 3, 2, 1]) == (1.0, 6.0)


def test_median_ci_small_and_empty():
    assert median_ci([3.5]) == (3.5, 3.5)
    lo, hi = median_ci([])
    assert math.isnan(lo) and math.isnan(hi)
    # Too few samples to reach 95%: the widest interval, with its real coverage.
    assert median_ci([4, 1, 3]) == (1.0, 4.0)
    assert median_ci_ranks(3)[2] == pytest.approx(0.75)


def test_median_ci_ignores_nan():
    assert median_ci([np.nan] + list(range(1, 21)) + [np.nan]) == (6.0, 15.0)


def test_summarize_hand_computed():
    s = summarize([10, 1, 9, 2, 8, 3, 7, 4, 6, 5])
    assert s["n"] == 10
    assert (s["min"], s["median"], s["max"]) == (1.0, 5.5, 10.0)
    assert (s["ci_low"], s["ci_high"], s["ci_level"]) == (2.0, 9.0, 0.95)
    # Linear interpolation: p90 at position 0.9 * 9 = 8.1 -> 9.1; p99 at 8.91 -> 9.91.
    assert s["p90"] == pytest.approx(9.1)
    assert s["p99"] == pytest.approx(9.91)


def test_summarize_one_value():
    s = summarize([2.5])
    assert s["n"] == 1
    for key in ("min", "median", "ci_low", "ci_high", "p90", "p99", "max"):
        assert s[key] == 2.5


def test_summarize_empty():
    s = summarize([])
    assert s["n"] == 0
    for key in ("min", "median", "ci_low", "ci_high", "p90", "p99", "max"):
        assert math.isnan(s[key])
    assert summarize([np.nan, np.nan])["n"] == 0


def test_bad_level():
    with pytest.raises(ValueError):
        median_ci([1, 2, 3], level=1.0)


finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, min_size=1, max_size=300),
       st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99]))
def test_ci_contains_median(values, level):
    lo, hi = median_ci(values, level)
    med = float(np.median(values))
    assert lo <= med <= hi
    assert lo in values and hi in values


@settings(max_examples=200, deadline=None)
@given(st.lists(finite, min_size=1, max_size=300))
def test_summary_is_ordered(values):
    s = summarize(values)
    assert s["n"] == len(values)
    assert s["min"] <= s["ci_low"] <= s["median"] <= s["ci_high"] <= s["max"]
    assert s["min"] <= s["p90"] <= s["p99"] <= s["max"]


@given(finite)
def test_n_equals_1(x):
    assert median_ci([x]) == (x, x)
    assert summarize([x])["median"] == x


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=1, max_value=2000), st.sampled_from([0.5, 0.9, 0.95, 0.99]))
def test_coverage_reaches_level_when_possible(n, level):
    j, k, coverage = median_ci_ranks(n, level)
    assert 1 <= j <= k <= n and j + k == n + 1
    if j > 1:
        assert coverage >= level - 1e-12
    else:
        assert coverage == pytest.approx(1 - 2 * 0.5 ** n)
    # j is as large as it can be: one step narrower falls below the level.
    assert 1 - 2 * binom.cdf(j, n, 0.5) < level
