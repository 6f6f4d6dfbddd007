# SPDX-License-Identifier: BSD-3-Clause
"""The shaped link's line (sim/link_line.py): a link's rate recovered from
synthetic pingpong repetitions, through stalls that only add time."""

import numpy as np
import pytest

from mpiscope.common.errors import UsageError
from mpiscope.sim.link_line import floor_line

G_TRUE, C_TRUE = 1 / 12.5e6, 120e-6  # 12.5 MB/s (100 Mbit/s), 120 us a message
SIZES = [8192 * 2**k for k in range(6)]  # 8 KiB .. 256 KiB


def _pingpong(rng, reps=40, stalled_share=0.0):
    """Each size's repetitions: the wire time plus small jitter, with a share
    of the repetitions stalled by up to 5 ms."""
    series = []
    for m in SIZES:
        t = C_TRUE + G_TRUE * m + rng.uniform(0, 2e-6, reps)
        stalled = rng.random(reps) < stalled_share
        t[stalled] += rng.uniform(0.5e-3, 5e-3, stalled.sum())
        series.append((m, t))
    return series


def test_a_clean_line_is_recovered_exactly():
    series = [(m, np.full(20, C_TRUE + G_TRUE * m)) for m in SIZES]
    G, c = floor_line(series)
    assert G == pytest.approx(G_TRUE, rel=1e-9) and c == pytest.approx(C_TRUE, rel=1e-9)


@pytest.mark.parametrize("stalled_size", range(len(SIZES)))
def test_one_size_stalled_3x_through_all_its_repetitions_leaves_the_rate_within_2_percent(stalled_size):
    series = _pingpong(np.random.default_rng(stalled_size))
    m, t = series[stalled_size]
    series[stalled_size] = (m, 3 * t)
    G, _ = floor_line(series)
    assert G == pytest.approx(G_TRUE, rel=0.02)


def test_stalls_in_a_third_of_every_size_s_repetitions_leave_the_rate_within_2_percent():
    G, c = floor_line(_pingpong(np.random.default_rng(7), reps=60, stalled_share=1 / 3))
    assert G == pytest.approx(G_TRUE, rel=0.02)
    assert c == pytest.approx(C_TRUE, abs=5e-6)


def test_the_line_does_not_depend_on_the_order_or_on_sizes_given_in_parts():
    series = _pingpong(np.random.default_rng(3))
    parts = [(m, t[:20]) for m, t in series] + [(m, t[20:]) for m, t in reversed(series)]
    assert floor_line(parts) == pytest.approx(floor_line(series), rel=1e-12)


@pytest.mark.parametrize("series", [[], [(4096, [1e-3, 2e-3])], [(4096, [1e-3]), (8192, [])]])
def test_fewer_than_two_sizes_is_a_clear_error(series):
    with pytest.raises(UsageError, match="two message sizes or more"):
        floor_line(series)
