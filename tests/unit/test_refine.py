# SPDX-License-Identifier: BSD-3-Clause
"""Size refinement (measure/refine.py): where a curve departs from a straight
line, sizes are proposed around the step, within the budget."""

from mpiscope.measure.refine import departures, propose_sizes


def test_straight_line_needs_no_refinement():
    sizes = [1, 2, 4, 8, 16, 32]
    medians = [1.0 + 0.1 * s for s in sizes]
    assert departures(sizes, medians, 0.05) == []
    assert propose_sizes(sizes, medians, 0.05, 10) == []


def test_a_step_gets_sizes_around_it():
    # latency jumps between 1024 and 2048 (eager -> rendezvous)
    sizes = [256, 512, 1024, 2048, 4096]
    medians = [1.0, 1.1, 1.2, 3.0, 3.4]
    assert departures(sizes, medians, 0.1) == [1024, 2048]
    new = propose_sizes(sizes, medians, 0.1, 10)
    assert 1536 in new  # the interval holding the step is halved
    assert set(new) <= {768, 1536, 3072}


def test_budget_bounds_added_sizes_and_keeps_the_worst():
    sizes = [1, 2, 4, 8, 16, 32, 64]
    medians = [1, 5, 1, 5, 1, 5, 1]
    new = propose_sizes(sizes, medians, 0.1, 3)
    assert len(new) == 3 and new == sorted(new)
    assert not set(new) & set(sizes)


def test_unsorted_input_and_no_room_between_sizes():
    assert propose_sizes([3, 1, 2], [1.0, 1.0, 9.0], 0.1, 5) == []  # no integer between 1, 2, 3
