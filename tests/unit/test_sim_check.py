# SPDX-License-Identifier: BSD-3-Clause
"""`sim check`'s verdict on one cell (sim/check.py): why a simulated time
misses the 15% goal, high, low, or the measured median itself unsure; and
which pairs of algorithms the measurement orders at all."""


def test_check_names_why_a_cell_misses_15_percent():
    from mpiscope.sim.check import CheckRow

    def row(sim, lo, hi):
        return CheckRow("bcast", "binomial", 1024, 30, 100.0, sim, sim, sim, lo, hi)

    assert row(114.0, 95, 105).cause is None and row(86.0, 95, 105).cause is None
    assert row(120.0, 95, 105).cause == "simulated high"
    assert row(80.0, 95, 105).cause == "simulated low"
    # the measured median itself is unsure by more than 15%: no simulation can be judged
    assert row(120.0, 80, 105).cause == row(80.0, 95, 116).cause == "measured median unsure"
    assert row(120.0, 95, 105).to_dict()["measured_ci_s"] == [95, 105]


def test_only_pairs_whose_measured_intervals_part_count_as_ordered():
    from mpiscope.sim.check import CheckRow, ordered_pairs

    def row(algo, measured, lo, hi, sim):
        return CheckRow("bcast", algo, 1024, 30, measured, sim, sim, sim, lo, hi)

    a = row("binomial", 100.0, 95, 105, 90.0)
    b = row("linear", 130.0, 120, 140, 150.0)  # apart from a, simulated in the same order
    c = row("pipelined_chain", 103.0, 98, 110, 80.0)  # overlaps a: a tie, whatever it is simulated as
    d = row("scatter_allgather_ring", 200.0, 190, 210, 85.0)  # apart from all, simulated in the wrong order
    assert ordered_pairs([a, b]) == (1, 1)
    assert ordered_pairs([a, c]) == (0, 0)
    # a-b, b-c, a-d, b-d, c-d ordered; alike: a-b, b-c and c-d (80 < 85)
    assert ordered_pairs([a, b, c, d]) == (5, 3)
