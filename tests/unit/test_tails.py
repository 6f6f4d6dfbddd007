# SPDX-License-Identifier: BSD-3-Clause
"""Tail tables (mpiscope.stats.tails)."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpiscope.stats.tails import by_min, by_rto, by_sd


def _shares(rows):
    return [r["count"] for r in rows], [r["share"] for r in rows]


def test_by_min_hand_computed():
    rows = by_min([1, 1.5, 2, 3.5, 7, 100])
    counts, shares = _shares(rows)
    # [1,2): 1, 1.5   [2,3): 2   [3,4): 3.5   [4,5), [5,6): none   >= 6: 7, 100
    assert counts == [2, 1, 1, 0, 0, 2]
    assert shares == pytest.approx([2 / 6, 1 / 6, 1 / 6, 0, 0, 2 / 6])
    assert [r["k"] for r in rows] == [1, 2, 3, 4, 5, 6]
    assert (rows[0]["low"], rows[0]["high"]) == (1.0, 2.0)
    assert (rows[-1]["low"], rows[-1]["high"]) == (6.0, None)
    assert rows[1]["label"] == "[2·min, 3·min)"
    json.dumps(rows, allow_nan=False)


def test_by_min_other_k_and_degenerate():
    assert [r["count"] for r in by_min([2, 3, 4, 5, 9], kmax=2)] == [2, 2, 1]
    assert by_min([]) == []
    assert by_min([0.0, 1.0]) == []        # no multiples of a zero minimum
    assert by_min([-1.0, 1.0]) == []
    assert [r["count"] for r in by_min([5.0] * 3)] == [3, 0, 0, 0, 0, 0]


def test_by_sd_hand_computed():
    # mean 4, sample sd 2: edges 6, 8, 10, ...; 6 lies in [mean+sd, mean+2sd).
    rows = by_sd([2, 4, 6])
    assert [r["count"] for r in rows] == [2, 1, 0, 0, 0, 0, 0]
    assert rows[0]["label"] == "< mean+sd" and rows[0]["low"] is None and rows[0]["high"] == 6.0
    assert (rows[1]["low"], rows[1]["high"]) == (6.0, 8.0)
    assert rows[-1]["label"] == ">= mean+6·sd" and rows[-1]["high"] is None
    # 0 x 9 and 10: mean 1, sd sqrt(10) = 3.162; 10 >= 1 + 2·3.162 = 7.32, < 10.49.
    rows = by_sd([0] * 9 + [10])
    assert [r["count"] for r in rows] == [9, 0, 1, 0, 0, 0, 0]


def test_by_sd_needs_spread():
    assert by_sd([]) == [] and by_sd([1.0]) == [] and by_sd([3.0, 3.0]) == []


def test_by_rto_hand_computed():
    x = [0.001, 0.002, 0.150, 0.2015, 0.35, 0.45, 0.9]
    rows = by_rto(x, 0.2)
    # [0.001, 0.201): 3   [0.201, 0.401): 2   [0.401, 0.601): 1   [0.601, 0.801): 0   >= 0.801: 1
    assert [r["count"] for r in rows] == [3, 2, 1, 0, 1]
    assert [r["label"] for r in rows] == ["no RTO", "1×RTO", "2×RTO", "3×RTO", ">= 4×RTO"]
    assert rows[0]["low"] == 0.001 and rows[0]["high"] == pytest.approx(0.201)
    assert by_rto(x, 0.0) == [] and by_rto([], 0.2) == []


def test_nan_and_inf_ignored():
    assert [r["count"] for r in by_min([1, np.nan, 2.5, np.inf])] == [1, 1, 0, 0, 0, 0]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(min_value=1e-9, max_value=1e3), min_size=1, max_size=200),
       st.integers(min_value=1, max_value=8))
def test_tables_partition_the_samples(values, kmax):
    x = np.asarray(values)
    for rows in (by_min(x, kmax), by_sd(x, kmax), by_rto(x, 0.2, kmax)):
        if not rows:
            continue
        assert sum(r["count"] for r in rows) == len(x)
        assert sum(r["share"] for r in rows) == pytest.approx(1.0)
        for r in rows:
            lo = -np.inf if r["low"] is None else r["low"]
            hi = np.inf if r["high"] is None else r["high"]
            assert r["count"] == int(np.sum((x >= lo) & (x < hi)))
    assert len(by_min(x, kmax)) == kmax + 1
