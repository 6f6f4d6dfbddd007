# SPDX-License-Identifier: BSD-3-Clause
"""Variation between and within launches (mpiscope.stats.launches)."""

import json
import math

import numpy as np
import pytest

from mpiscope.common.jsonable import plain
from mpiscope.stats.launches import ONE_LAUNCH, launch_variation

US = 1e-6


def _launches(offsets, per_launch=400, within_sd=1 * US, seed=0, base=20 * US):
    rng = np.random.default_rng(seed)
    values = [base + off + within_sd * rng.standard_normal(per_launch) for off in offsets]
    launch = [np.full(per_launch, k) for k in range(len(offsets))]
    return np.concatenate(values), np.concatenate(launch)


def test_between_launch_sd_close_to_the_truth():
    offsets = np.random.default_rng(1).normal(0.0, 2 * US, 30)
    v, g = _launches(offsets)
    r = launch_variation(v, g, seed=3)
    truth = np.std(offsets, ddof=1)
    assert r["n_launches"] == 30
    assert r["between_sd"] == pytest.approx(truth, rel=0.1)
    assert r["within_sd"] == pytest.approx(1 * US, rel=0.1)
    icc = truth ** 2 / (truth ** 2 + US ** 2)
    assert r["icc"] == pytest.approx(icc, abs=0.05)
    assert r["ratio"] == pytest.approx(truth / US, rel=0.15)
    assert r["test"]["name"] == "Kruskal-Wallis" and r["test"]["p_value"] < 1e-6
    assert r["relative_between_sd"] == pytest.approx(truth / (20 * US), rel=0.15)


def test_known_offsets_hand_checked():
    # Three launches 0, +3 and +6 us apart: launch medians sd 3 us (less
    # the medians' tiny sampling noise); within sd 0.5 us.
    v, g = _launches([0.0, 3 * US, 6 * US], per_launch=2000, within_sd=0.5 * US, seed=2)
    r = launch_variation(v, g, seed=1)
    assert r["between_sd_raw"] == pytest.approx(3 * US, rel=0.02)
    assert r["between_sd"] <= r["between_sd_raw"]
    assert r["between_sd"] == pytest.approx(3 * US, rel=0.02)
    assert [x["launch"] for x in r["launches"]] == [0, 1, 2]
    for x, off in zip(r["launches"], [0.0, 3 * US, 6 * US]):
        assert x["n"] == 2000
        assert abs(x["median"].point - (20 * US + off)) < 4 * x["median"].stderr


def test_no_launch_effect_gives_little_between_variation():
    v, g = _launches([0.0] * 8, per_launch=500, seed=4)
    r = launch_variation(v, g, seed=1)
    # The launch medians scatter by ~ 1.25 us / sqrt(500) = 0.056 us; with
    # that sampling noise removed little or nothing is left.
    assert r["between_sd"] < 0.05 * US
    assert r["icc"] < 0.01
    assert r["test"]["p_value"] > 0.001


def test_one_launch_degrades_gracefully():
    v, g = _launches([0.0], per_launch=100)
    r = launch_variation(v, g)
    assert r["n_launches"] == 1 and r["note"] == ONE_LAUNCH
    assert r["between_sd"] is None and r["icc"] is None and r["test"] is None
    assert r["within_sd"] == pytest.approx(1 * US, rel=0.25)
    assert len(r["launches"]) == 1
    json.dumps(plain(r), allow_nan=False)


def test_no_samples_and_nonfinite_values():
    r = launch_variation([], [])
    assert r["n_launches"] == 0 and r["launches"] == []
    r = launch_variation([1.0, np.nan, 2.0, np.inf, 3.0], [0, 0, 0, 1, 1])
    assert [x["n"] for x in r["launches"]] == [2, 1]
    with pytest.raises(ValueError):
        launch_variation([1.0, 2.0], [0])


def test_constant_launches():
    r = launch_variation([1.0] * 4 + [2.0] * 4, [0] * 4 + [1] * 4)
    assert r["within_sd"] == 0.0 and r["ratio"] is None
    assert r["between_sd"] == pytest.approx(math.sqrt(0.5))
    assert r["icc"] == 1.0


def test_seeded_and_recorded():
    v, g = _launches([0.0, 1 * US], per_launch=50, seed=5)
    a, b = launch_variation(v, g, seed=9), launch_variation(v, g, seed=9)
    assert a == b and a["seed"] == 9
    assert "seed 9" in a["launches"][0]["median"].method
    assert launch_variation(v, g, seed=10)["launches"][0]["median"] != a["launches"][0]["median"]
