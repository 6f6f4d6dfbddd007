# SPDX-License-Identifier: BSD-3-Clause
"""`sim check`'s verdict on one cell (sim/check.py): why a simulated time
misses the 15% goal, high, low, or the measured median itself unsure."""


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
