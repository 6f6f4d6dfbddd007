# SPDX-License-Identifier: BSD-3-Clause
"""Modes and retransmission-timeout flags (mpiscope.stats.modes, mpiscope.stats.rto)."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpiscope.stats.modes import _runs_extrema, detect_modes, factorize, mode_weights
from mpiscope.stats.rto import as_rto, parse_ip_route, rto_min

MS = 1e-3


def _mixture(seed, n, parts):
    """parts: (weight, location_s, log-sd); returns values and part index."""
    rng = np.random.default_rng(seed)
    values, part = [], []
    for i, (w, loc, s) in enumerate(parts):
        k = int(round(n * w))
        values.append(loc * rng.lognormal(0.0, s, k))
        part.append(np.full(k, i))
    return np.concatenate(values), np.concatenate(part)


def _rto_sample(seed=1, n=20000, second=201 * MS, weight=0.05):
    x, part = _mixture(seed, n, [(1 - weight, 1 * MS, 0.1), (weight, second, 0.005)])
    # The slow samples come from one pair; the others from four.
    sources = np.where(part == 1, "2->3", np.array(["0->1", "1->0", "2->3", "3->2"])[np.arange(len(x)) % 4])
    return x, sources


def test_retransmission_mode_flagged_with_its_weight():
    x, sources = _rto_sample()
    r = detect_modes(x, sources, rto=0.2)
    assert len(r["modes"]) == 2
    main, slow = r["modes"]
    assert r["main"] == 0
    assert main["location"] == pytest.approx(1 * MS, rel=0.05)
    assert slow["location"] == pytest.approx(201 * MS, rel=0.02)
    assert slow["weight"] == pytest.approx(0.05, abs=0.01)
    assert slow["rto_suspect"] and slow["rto_multiple"] == 1
    assert slow["gap_s"] == pytest.approx(0.2, abs=0.01)
    assert not main["rto_suspect"]
    assert r["scale"] == "log"
    # The slow mode comes from one pair only, and holds most of that pair's samples.
    top = slow["sources"][0]
    assert top["source"] == "2->3" and top["share_of_mode"] == 1.0
    assert top["share_of_source"] == pytest.approx(1000 / (1000 + 19000 / 4), rel=0.01)
    assert len(main["sources"]) == 4
    json.dumps(r, allow_nan=False)


def test_unimodal_lognormal_is_one_mode_and_no_flag():
    for seed in range(3):
        x = np.random.default_rng(seed).lognormal(np.log(1 * MS), 0.5, 50000)
        r = detect_modes(x, rto=0.2)
        assert len(r["modes"]) == 1, seed
        assert r["modes"][0]["weight"] == 1.0
        assert not r["modes"][0]["rto_suspect"]


def test_second_mode_at_50ms_is_not_a_retransmission():
    x, _ = _rto_sample(second=51 * MS)
    r = detect_modes(x, rto=0.2)
    assert len(r["modes"]) == 2
    assert r["modes"][1]["weight"] == pytest.approx(0.05, abs=0.01)
    assert not any(m["rto_suspect"] for m in r["modes"])


def test_several_timeouts_and_their_multiples():
    x, _ = _mixture(2, 40000, [(0.9, 1 * MS, 0.1), (0.08, 201 * MS, 0.01), (0.02, 601 * MS, 0.01)])
    r = detect_modes(x, rto=0.2)
    assert [m["rto_multiple"] for m in r["modes"]] == [None, 1, 3]
    assert [round(m["weight"], 2) for m in r["modes"]] == [0.9, 0.08, 0.02]


def test_rto_min_of_the_host_is_used_and_recorded():
    # With rto_min 5 ms a mode 5 ms above the main one is a timeout, one
    # 200 ms above is not.
    x, _ = _mixture(3, 20000, [(0.95, 1 * MS, 0.1), (0.05, 6 * MS, 0.02)])
    info = rto_min(ip_route_text="default via 10.0.0.1 dev eth0 rto_min lock 5ms\n", read_system=False)
    r = detect_modes(x, rto=info)
    assert r["modes"][1]["rto_suspect"] and r["modes"][1]["rto_multiple"] == 1
    assert r["rto"]["rto_min_s"] == 0.005 and "ip route" in r["rto"]["source"]
    y, _ = _rto_sample()
    assert not detect_modes(y, rto=info)["modes"][1]["rto_suspect"]


def test_main_mode_is_the_heaviest_even_when_not_first():
    x, _ = _mixture(4, 20000, [(0.1, 0.1 * MS, 0.05), (0.9, 1 * MS, 0.05)])
    r = detect_modes(x, rto=0.2)
    assert len(r["modes"]) == 2 and r["main"] == 1
    assert r["modes"][0]["gap_s"] < 0 and not r["modes"][0]["rto_suspect"]


def test_coarse_timer_ticks_are_not_modes():
    rng = np.random.default_rng(5)
    for sd in (0.05, 0.6):
        x = np.round(rng.lognormal(np.log(2e-6), sd, 50000) / 1e-7) * 1e-7
        r = detect_modes(x[x > 0], rto=0.2)
        assert len(r["modes"]) == 1, sd
        assert r["resolution"] == pytest.approx(1e-7)


def test_a_million_samples():
    x, _ = _mixture(6, 1_000_000, [(0.97, 20e-6, 0.2), (0.03, 0.2, 0.01)])
    r = detect_modes(x, np.arange(len(x)) % 8, rto=0.2)
    assert len(r["modes"]) == 2 and r["modes"][1]["rto_suspect"]
    assert r["modes"][1]["weight"] == pytest.approx(0.03, abs=0.002)
    assert r["grid_bins"] <= 1 << 16


def test_deterministic():
    x, sources = _rto_sample(seed=7, n=5000)
    assert detect_modes(x, sources) == detect_modes(x, sources)


def test_degenerate_inputs():
    r = detect_modes([], rto=0.2)
    assert r["n"] == 0 and r["modes"] == [] and r["main"] is None
    r = detect_modes([3.0] * 10 + [np.nan])
    assert len(r["modes"]) == 1 and r["modes"][0]["location"] == 3.0
    assert r["modes"][0]["count"] == 10
    assert r["rto"]["rto_min_s"] == 0.2 and "default" in r["rto"]["source"]
    r = detect_modes([-1.0, 0.0, 1.0, 2.0])  # not positive: linear
    assert r["scale"] == "linear" and len(r["modes"]) == 1
    with pytest.raises(ValueError):
        detect_modes([-1.0, 1.0], scale="log")


def test_factorize():
    codes, names = factorize(np.array(["b", "a", "b"], dtype=object))
    assert [names[c] for c in codes] == ["b", "a", "b"]
    codes, names = factorize(np.array([3, 1, 3]))
    assert [names[c] for c in codes] == [3, 1, 3]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(min_value=1e-7, max_value=10.0), min_size=1, max_size=300))
def test_modes_partition_the_samples(values):
    r = detect_modes(values, rto=0.2)
    modes = r["modes"]
    assert sum(m["count"] for m in modes) == len(values)
    assert sum(m["weight"] for m in modes) == pytest.approx(1.0)
    assert modes[r["main"]]["count"] == max(m["count"] for m in modes)
    for a, b in zip(modes, modes[1:]):
        assert a["high"] < b["low"]
    for m in modes:
        assert m["low"] <= m["median"] <= m["high"]


def test_mode_weights_are_detect_modes_weights():
    rng = np.random.default_rng(9)
    coarse = np.round(rng.lognormal(np.log(2e-6), 0.3, 3000) / 1e-7) * 1e-7
    samples = [
        _rto_sample(seed=3, n=4000)[0],
        _mixture(4, 3000, [(0.6, 1e-6, 0.05), (0.4, 3e-6, 0.05)])[0],
        coarse[coarse > 0],
        [3.0] * 10 + [np.nan],
        [-1.0, 0.0, 1.0, 2.0],
        [],
    ]
    for x in samples:
        assert mode_weights(x) == [m["weight"] for m in detect_modes(x)["modes"]]
    assert len(mode_weights(samples[1])) == 2


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=40))
def test_valleys_are_the_middle_of_the_lowest_run_between_two_peaks(levels):
    f = np.asarray(levels, dtype=float)
    peaks, valleys = _runs_extrema(f)
    assert len(valleys) == max(0, len(peaks) - 1)
    for p0, p1, v in zip(peaks, peaks[1:], valleys):
        lows = p0 + np.flatnonzero(f[p0 : p1 + 1] == f[p0 : p1 + 1].min())
        assert v == lows[(len(lows) - 1) // 2]


# ---------------------------------------------------------------- RTO_min


def test_parse_ip_route():
    text = (
        "default via 10.0.0.1 dev eth0 proto dhcp metric 100 rto_min lock 5ms\n"
        "10.1.0.0/16 dev ib0 scope link rto_min 1s\n"
        "10.2.0.0/16 dev ib1 rto_min 300\n"
        "10.3.0.0/16 dev eth1 rtt 1ms\n"
    )
    assert parse_ip_route(text) == pytest.approx([0.005, 1.0, 0.3])
    assert parse_ip_route("default via 192.0.2.1 dev eth0\n") == []


def test_rto_min_sources():
    r = rto_min(ip_route_text="x rto_min lock 20ms\ny rto_min 40ms", read_system=False)
    assert r["rto_min_s"] == pytest.approx(0.02) and r["values_s"] == pytest.approx([0.02, 0.04])
    r = rto_min(ip_route_text="default via 192.0.2.1 dev eth0", sysctl_text="50000\n", read_system=False)
    assert r["rto_min_s"] == 0.05 and "tcp_rto_min_us" in r["source"]
    r = rto_min(ip_route_text="", sysctl_text=None, read_system=False)
    assert r["rto_min_s"] == 0.2 and "default" in r["source"]


def test_as_rto():
    assert as_rto(0.1) == {"rto_min_s": 0.1, "source": "given"}
    assert as_rto(None)["rto_min_s"] == 0.2
    assert as_rto({"rto_min_s": 0.01, "source": "s"}) == {"rto_min_s": 0.01, "source": "s"}
