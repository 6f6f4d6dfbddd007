# SPDX-License-Identifier: BSD-3-Clause
"""Latency and bandwidth models (models/hockney.py, curves.py, fits.py):
bootstrap medians, least-absolute-deviation lines computed by hand, a known
line recovered with its bandwidth and n_1/2, and fits that are flagged."""

import math

import numpy as np
import pytest

from mpiscope.models.curves import REL_SCALE_FLOOR, as_times, build_curve
from mpiscope.models.fits import fit_curve
from mpiscope.stats.medians import bootstrap_medians, percentile_interval
from mpiscope.models.hockney import fit_quality, hockney, lad_line, lad_lines

US, NS = 1e-6, 1e-9
SIZES = [0, 1, 8, 64, 512, 4096, 32768, 262144, 1048576, 4194304]


def _curve(f, unit="s", sizes=SIZES, reps=5, sigma=0.0, seed=0, n_boot=200):
    rng = np.random.default_rng(seed)
    values = {s: f(s) * rng.lognormal(0.0, sigma, reps) if sigma else np.full(reps, f(s))
              for s in sizes}
    return build_curve("pingpong" if unit == "s" else "bw", "mpi", values,
                       np.random.default_rng(seed + 1), n_boot=n_boot, unit=unit)


# ---------------------------------------------------------------- bootstrap of a median

def test_bootstrap_of_a_constant_is_the_constant():
    assert np.all(bootstrap_medians([2.5] * 7, 50, np.random.default_rng(1)) == 2.5)
    assert np.all(bootstrap_medians([4.0] * 8, 50, np.random.default_rng(1)) == 4.0)


def test_bootstrap_medians_are_order_statistics_with_the_right_distribution():
    # n = 3: the resample median is x_(1) when at least 2 of 3 draws hit x_(1):
    # P = 3·(1/3)²·(2/3) + (1/3)³ = 7/27; by symmetry x_(3) too; x_(2) gets 13/27.
    reps = bootstrap_medians([30.0, 10.0, 20.0], 27000, np.random.default_rng(5))
    assert set(np.unique(reps)) == {10.0, 20.0, 30.0}
    assert np.mean(reps == 10.0) == pytest.approx(7 / 27, abs=0.01)
    assert np.mean(reps == 20.0) == pytest.approx(13 / 27, abs=0.01)


def test_bootstrap_medians_match_direct_resampling():
    x = np.random.default_rng(3).lognormal(0.0, 1.0, 11)
    fast = bootstrap_medians(x, 40000, np.random.default_rng(1))
    idx = np.random.default_rng(2).integers(0, len(x), (40000, len(x)))
    slow = np.median(x[idx], axis=1)
    for q in (0.1, 0.5, 0.9):
        assert np.quantile(fast, q) == pytest.approx(np.quantile(slow, q), rel=0.02)


def test_percentile_interval_allows_infinite_replicates():
    lo, hi = percentile_interval([1.0, 2.0, 3.0, np.inf], 0.5)
    assert (lo, hi) == (1.0, 3.0)
    assert percentile_interval([1.0, np.inf, np.inf, np.inf], 0.5)[1] == np.inf


# ---------------------------------------------------------------- LAD line

def test_lad_line_hand_computed():
    # Three points on y = 1 + x and one far off: LAD goes through the three.
    a, b = lad_line([0, 1, 2, 3], [1, 2, 3, 10], [1, 1, 1, 1])
    assert (a, b) == pytest.approx((1.0, 1.0))
    # Weight 10 on the off point: the line y = 1 + x costs 10·6 = 60; through
    # (0, 1) and (3, 10) (y = 1 + 3x) it costs |2-4| + |3-7| = 6, through
    # (1, 2) and (3, 10) (y = -2 + 4x) |1+2| + |3-6| = 6 too: the tie goes to
    # the first pair.
    a, b = lad_line([0, 1, 2, 3], [1, 2, 3, 10], [1, 1, 1, 10])
    assert (a, b) == pytest.approx((1.0, 3.0))


def test_lad_lines_row_by_row():
    x = np.array([0.0, 1.0, 2.0])
    Y = np.array([[1.0, 3.0, 5.0], [0.0, 1.0, 2.0]])
    a, b = lad_lines(x, Y, np.ones(3))
    assert a == pytest.approx([1.0, 0.0]) and b == pytest.approx([2.0, 1.0])
    with pytest.raises(ValueError):
        lad_line([1, 1], [2, 3], [1, 1])


# ---------------------------------------------------------------- Hockney

def test_exact_line_recovered_with_bandwidth_and_n_half():
    # T(n) = 2 µs + 0.5 ns/B · n: 1/β = 2e9 B/s = 2000 MB/s, n½ = α/β = 4000 B.
    c = _curve(lambda n: 2 * US + 0.5 * NS * n)
    h = hockney(c)
    assert h.alpha.point == pytest.approx(2e-6, rel=1e-9)
    assert h.beta.point == pytest.approx(0.5e-9, rel=1e-9)
    assert h.bandwidth.point == pytest.approx(2e9, rel=1e-9)
    assert h.n_half.point == pytest.approx(4000, rel=1e-9)
    assert h.r2 == 1.0 and h.max_rel_residual == pytest.approx(0.0, abs=1e-9)
    # Constant samples: every bootstrap replicate is the same line.
    assert (h.alpha.low, h.alpha.high) == pytest.approx((2e-6, 2e-6), rel=1e-9)
    assert (h.first_size, h.last_size, h.n_sizes) == (0, 4194304, len(SIZES))


def test_robust_to_an_outlying_size():
    f = lambda n: 2 * US + 0.5 * NS * n  # noqa: E731
    c = _curve(lambda n: 5 * f(n) if n == 4096 else f(n))
    h = hockney(c)
    assert h.alpha.point == pytest.approx(2e-6, rel=1e-9)
    assert h.beta.point == pytest.approx(0.5e-9, rel=1e-9)
    assert h.worst_size == 4096 and h.max_rel_residual == pytest.approx(0.8)


def test_noisy_line_ci_contains_truth_and_point():
    c = _curve(lambda n: 2 * US + 0.5 * NS * n, reps=101, sigma=0.05, seed=4, n_boot=500)
    h = hockney(c)
    for est, truth in ((h.alpha, 2e-6), (h.beta, 0.5e-9), (h.bandwidth, 2e9), (h.n_half, 4000)):
        assert est.contains(truth), (est, truth)
        assert est.contains(est.point)
        assert est.level == 0.95 and est.stderr > 0
        assert est.relative_halfwidth() < 0.1


def test_seeded_bootstrap_is_reproducible():
    f = lambda n: 1 * US + 0.2 * NS * n  # noqa: E731
    h1 = hockney(_curve(f, reps=21, sigma=0.1, seed=7))
    h2 = hockney(_curve(f, reps=21, sigma=0.1, seed=7))
    assert h1 == h2


def test_bandwidth_benchmark_fitted_as_time_per_message():
    # bw reports size / (α + β·size): the line is recovered, and 1/β is the
    # asymptotic bandwidth; size 0 carries no time and is left out.
    alpha, beta = 0.4 * US, 0.125 * NS
    sizes = [0] + SIZES[1:]
    c = _curve(lambda n: n / (alpha + beta * n) if n else 0.0, unit="B/s", sizes=sizes)
    assert c.dropped[0][0] == 0 and list(c.sizes) == SIZES[1:]
    assert c.quantity == "time per message = size / bandwidth"
    h = hockney(c)
    assert (h.alpha.point, h.beta.point) == pytest.approx((alpha, beta), rel=1e-9)
    assert h.bandwidth.point == pytest.approx(8e9, rel=1e-9)
    assert as_times("B/s", 1000, [2e9])[0] == pytest.approx(5e-7)
    assert as_times("s", 1000, [2e-6])[0] == 2e-6


def test_flat_curve_has_infinite_bandwidth_and_no_n_half():
    h = hockney(_curve(lambda n: 1 * US, sizes=[1, 2, 4, 8]))
    assert h.beta.point == pytest.approx(0.0, abs=1e-20)
    assert h.bandwidth.point == math.inf and math.isnan(h.n_half.point)


def test_scales_floor():
    c = _curve(lambda n: 1 * US + n * NS, sizes=[1, 2])
    assert c.scales == pytest.approx(REL_SCALE_FLOOR * c.medians)


def test_fit_quality_hand_computed():
    # Line y = x on points (1, 1), (2, 2), (3, 4): residuals 0, 0, 1;
    # SS_tot = (1-7/3)² + (2-7/3)² + (4-7/3)² = 14/3; R² = 1 - 3/14.
    q = fit_quality([1, 2, 3], [1, 2, 4], 0.0, 1.0)
    assert q["r2"] == pytest.approx(1 - 3 / 14)
    assert q["max_rel_residual"] == pytest.approx(0.25) and q["worst_size"] == 3


def test_one_size_is_not_fitted():
    bf = fit_curve(_curve(lambda n: 1 * US, sizes=[8]))
    assert bf.hockney is None and bf.piecewise is None
    assert "one size" in bf.note
    with pytest.raises(ValueError):
        hockney(_curve(lambda n: 1 * US, sizes=[8]))


# ---------------------------------------------------------------- flags of doubtful fits

def _flags_and_text(f, sizes):
    from mpiscope.models.fits import FitResult
    from mpiscope.store.run import Run
    from mpiscope.views.fit import format_fit

    fit = fit_curve(_curve(f, sizes=sizes, reps=6))
    result = FitResult("r", Run.from_context({"run_id": "r"}), 1, 200, 0.95, 3, [fit])
    return fit, format_fit(result)


def test_negative_alpha_is_flagged_and_n_half_not_printed():
    fit, text = _flags_and_text(lambda s: -0.5 * US + 1 * NS * s, [1000, 2000, 3000, 4000])
    assert fit.hockney.alpha.point == pytest.approx(-0.5 * US)
    assert [f.split(":")[0] for f in fit.flags] == ["Hockney"]
    assert "α < 0 (-0.5 us)" in fit.flags[0]
    assert "  FLAG: Hockney: α < 0" in text
    assert [l.split()[:3] for l in text.splitlines() if "n½" in l] == [["n½", "=", "α/β"]]
    assert next(l for l in text.splitlines() if "n½" in l).split()[3] == "-"


def test_falling_time_flags_beta_and_prints_no_bandwidth():
    fit, text = _flags_and_text(lambda s: 4 * US - 1 * NS * s, [0, 1000, 2000, 3000])
    assert fit.hockney.beta.point < 0 and math.isinf(fit.hockney.bandwidth.point)
    assert any("β < 0" in f and "1/β is undefined" in f for f in fit.flags)
    assert any("β = 0" in f for f in fit_curve(_curve(lambda s: 1 * US, sizes=[0, 1000, 2000], reps=6)).flags)
    line = next(l for l in text.splitlines() if l.strip().startswith("1/β"))
    assert line.split()[1:] == ["-", "MB/s", "-"]          # not "inf MB/s"
    assert "inf" not in text


def test_poor_fit_is_flagged():
    fit, text = _flags_and_text(lambda s: 100 * US if s == 3000 else 1 * US, [0, 1000, 2000, 3000])
    assert fit.hockney.r2 < 0.9
    assert any(f.startswith("Hockney: poor fit, R²") for f in fit.flags)
    # A straight line with noise: nothing to flag.
    clean = fit_curve(_curve(lambda s: 1.5 * US + 0.1 * NS * s, reps=6, sigma=0.01))
    assert clean.flags == [] and clean.to_dict()["flags"] == []


def test_sizes_with_too_few_samples_are_flagged():
    few = fit_curve(_curve(lambda s: 1.5 * US + 0.1 * NS * s, reps=3, sigma=0.01))
    assert any(f.startswith(f"insufficient data at {len(SIZES)} of {len(SIZES)} sizes (0 B, 1 B")
               for f in few.flags)
    assert not any("insufficient" in f
                   for f in fit_curve(_curve(lambda s: 1.5 * US + 0.1 * NS * s, reps=6, sigma=0.01)).flags)
