# SPDX-License-Identifier: BSD-3-Clause
"""Piecewise models of a curve (models/piecewise.py): weighted lines computed
by hand, breaks recovered where they are, noisy straight lines rarely
split, and the least points per segment."""

import numpy as np
import pytest

from mpiscope.models.curves import build_curve
from mpiscope.models.piecewise import piecewise, segment, segment_of, wls_line

US, NS = 1e-6, 1e-9
SIZES = [2 ** k for k in range(0, 23)]     # 1 B .. 4M, one size step = factor 2


def _curve(f, sizes=SIZES, reps=31, sigma=0.0, seed=0, n_boot=200):
    rng = np.random.default_rng(seed)
    values = {s: f(s) * rng.lognormal(0.0, sigma, reps) if sigma else np.full(reps, f(s))
              for s in sizes}
    return build_curve("pingpong", "mpi", values, np.random.default_rng(seed + 1),
                       n_boot=n_boot)


def eager_rendezvous(n):
    # The switch happens above 8K: 8192 is the last eager size.
    return 1.0 * US + 0.2 * NS * n if n <= 8192 else 5.0 * US + 0.08 * NS * n


def test_wls_line_hand_computed():
    # Equal scales: ordinary least squares. Points (0, 1), (1, 2), (2, 4):
    # β = Sxy/Sxx = 1.5, α = ȳ - β·x̄ = 7/3 - 1.5 = 5/6; RSS = 1/6.
    a, b, rss = wls_line([0, 1, 2], [1, 2, 4], [1, 1, 1])
    assert (a, b, rss) == pytest.approx((5 / 6, 1.5, 1 / 6))
    # Scales weight the residuals: halving the last scale is doubling its weight.
    a2, b2, _ = wls_line([0, 1, 2], [1, 2, 4], [1, 1, 0.5])
    assert b2 > b


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_one_break_recovered_within_one_size_step(seed):
    pw = piecewise(_curve(eager_rendezvous, sigma=0.05, seed=seed))
    assert pw.n_segments == 2
    (below, above), = pw.breaks
    # The truth: the last eager size is 8192, the first rendezvous size 16384.
    assert 4096 <= below <= 16384 and above == 2 * below
    first, second = pw.segments
    assert first.first_size == 1 and second.last_size == 4194304
    assert second.beta.point == pytest.approx(0.08e-9, rel=0.05)
    assert second.bandwidth.point == pytest.approx(12.5e9, rel=0.05)
    assert first.alpha.point == pytest.approx(1.0e-6, rel=0.05)


def test_exact_break_and_lines_without_noise():
    pw = piecewise(_curve(eager_rendezvous))
    assert pw.breaks == ((8192, 16384),)
    first, second = pw.segments
    assert (first.first_size, first.last_size, first.n_sizes) == (1, 8192, 14)
    assert (second.first_size, second.last_size, second.n_sizes) == (16384, 4194304, 9)
    assert (first.alpha.point, first.beta.point) == pytest.approx((1e-6, 0.2e-9), rel=1e-7)
    assert (second.alpha.point, second.beta.point) == pytest.approx((5e-6, 0.08e-9), rel=1e-7)
    assert second.n_half.point == pytest.approx(5e-6 / 0.08e-9, rel=1e-7)
    assert first.r2 == pytest.approx(1.0) and second.r2 == pytest.approx(1.0)
    assert segment_of(pw, 8192) is first and segment_of(pw, 16384) is second
    assert segment_of(pw, 10000) is None


def test_two_breaks_without_noise():
    def f(n):
        if n <= 512:
            return 0.5 * US + 1.0 * NS * n
        if n <= 65536:
            return 2.0 * US + 0.3 * NS * n
        return 20.0 * US + 0.1 * NS * n
    pw = piecewise(_curve(f))
    assert pw.breaks == ((512, 1024), (65536, 131072))
    assert [s.beta.point for s in pw.segments] == pytest.approx([1e-9, 0.3e-9, 0.1e-9],
                                                               rel=1e-7)


def test_noisy_straight_lines_are_rarely_split():
    # BIC still splits a noisy straight line now and then: bound how often.
    fits = [piecewise(_curve(lambda n: 1.0 * US + 0.1 * NS * n, sigma=0.05, seed=seed))
            for seed in range(1, 41)]
    single = [pw for pw in fits if pw.n_segments == 1 and pw.breaks == ()]
    assert len(single) >= 34  # at most 15% false splits (about 5% expected)
    assert sum(pw.segments[0].beta.contains(0.1e-9) for pw in single) >= 0.8 * len(single)


def test_exact_straight_line_gives_one_segment():
    pw = piecewise(_curve(lambda n: 1.0 * US + 0.1 * NS * n))
    assert pw.n_segments == 1
    assert min(pw.scores, key=pw.scores.get) == 1


def test_min_points_respected():
    x = np.array(SIZES[:9], dtype=float)
    y = np.where(x <= 64, 1 + x, 100 + x)        # a break leaving 2 points above
    bounds, _ = segment(x, y, np.ones_like(y) * 0.01, min_points=3)
    assert all(j - i + 1 >= 3 for i, j in bounds)
    bounds, _ = segment(x, y, np.ones_like(y) * 0.01, min_points=2)
    assert bounds == [(0, 6), (7, 8)]


def test_two_sizes_one_segment():
    pw = piecewise(_curve(lambda n: 1 * US + n * NS, sizes=[8, 1024]))
    assert pw.n_segments == 1 and pw.segments[0].n_sizes == 2
    with pytest.raises(ValueError):
        segment([1.0], [1.0], [1.0])
