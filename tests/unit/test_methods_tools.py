# SPDX-License-Identifier: BSD-3-Clause
"""Each tool's number derived from stored rows, against values computed by
hand from the tool's own formula (methods/osu.py … mpibench.py). Times in
the rows are microseconds written as seconds (1e-6 each)."""

import math

import pytest

from mpiscope.methods import imb, mpibench, mpptest, osu, skampi
from mpiscope.methods.stored import CALIBRATION, LATE, MEASURED, REJECTED, WARMUP
from methods_data import series

U = 1e-6


def close(a, b):
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


def spans(starts, ends, phase=MEASURED, calls=1, flags=None, batch=0):
    flags = flags or [0] * len(starts)
    return [(s * U, e * U, phase, calls, f, batch) for s, e, f in zip(starts, ends, flags)]


def test_osu_latency_is_the_mean_half_round_trip_of_the_timed_iterations():
    # the skipped iterations' row (warm-up) does not count
    rows = spans([0], [500], phase=WARMUP, calls=100) + spans([10, 20, 30], [12, 24, 39])
    d = osu.derive(series("osu", "pingpong", 8, {0: rows}, start="back_to_back"))
    assert close(d.number, 2.5 * U)                      # (2 + 4 + 9) / 3 / 2
    assert d.printed == {"Latency (us)": pytest.approx(2.5)}
    assert [s.cause for s in d.steps] == ["statistic"] and close(d.reading, 2.0 * U)  # median 4 / 2


def test_osu_bandwidth_is_bytes_over_the_sum_of_the_windows():
    rows = spans([0, 5000], [1000, 8000])
    d = osu.derive(series("osu", "bw", 1000, {0: rows}, params={"window": 64}))
    assert close(d.number, 1000 * 64 * 2 / 4000e-6)      # 32e6 B/s
    assert d.printed["Bandwidth (MB/s)"] == pytest.approx(32.0)
    assert close(d.reading, 1000 * 64 / 2000e-6)         # the median window: (1000 + 3000) / 2 µs


# Two ranks, three calls: rank 0 takes 1, 2, 3 µs, rank 1 3, 3, 6 µs; rank 0
# starts after rank 1 in the first two calls.
COLL = {0: spans([1.0, 11.5, 20], [2.0, 13.5, 23]), 1: spans([0.5, 11, 20], [3.5, 14, 26])}


def test_osu_collective_is_the_mean_over_ranks_of_each_ranks_mean():
    d = osu.derive(series("osu", "allreduce", 8, COLL))
    assert close(d.number, 3 * U)                        # rank means 2 and 4
    assert d.printed["Min Latency(us)"] == pytest.approx(2) and d.printed["Max Latency(us)"] == pytest.approx(4)
    assert d.printed["Iterations"] == 3
    steps = [(s.cause, round(s.value / U, 9)) for s in d.steps]
    # per call: rank mean 2, 2.5, 4.5 (median 2.5); slowest 3, 3, 6 (median 3);
    # from the last start 3.5 - 1 = 2.5, 14 - 11.5 = 2.5, 26 - 20 = 6 (median 2.5)
    assert steps == [("statistic", 2.5), ("ranks", 3.0), ("barrier", 2.5)]


def test_imb_pingpong_takes_the_larger_of_the_two_loops_and_its_bandwidth():
    rank0 = spans([0], [1], phase=CALIBRATION) + spans([5], [2005], calls=1000)
    rank1 = spans([0], [1], phase=CALIBRATION) + spans([5], [2105], calls=1000)
    s = series("imb", "pingpong", 1000, {0: rank0, 1: rank1}, timing="loop", start="back_to_back")
    d = imb.derive(s)
    assert close(d.number, 1.05 * U)                     # 2100 / 1000 / 2
    assert d.printed["#repetitions"] == 1000
    assert d.printed["Mbytes/sec"] == pytest.approx(1000 / 1.05)
    assert close(d.reading, 1.0 * U)                     # rank 0's loop
    bw = imb.derive(series("imb", "bw", 1000, {0: rank0, 1: rank1}, timing="loop", start="back_to_back"))
    assert close(bw.number, 1000 / (1.05 * U)) and bw.unit == "B/s" and bw.differs


def test_imb_collective_prints_t_min_t_max_t_avg_of_the_rank_means():
    d = imb.derive(series("imb", "bcast", 8, COLL))
    assert d.printed["t_min[usec]"] == pytest.approx(2) and d.printed["t_max[usec]"] == pytest.approx(4)
    assert d.printed["t_avg[usec]"] == pytest.approx(3) and close(d.number, 3 * U)


def test_imb_barrier_is_each_ranks_loop_over_its_repetitions():
    rows = {0: spans([10], [1010], calls=1000), 1: spans([9.8], [1209.8], calls=1000)}
    d = imb.derive(series("imb", "barrier", 0, rows, timing="loop", start="back_to_back"))
    assert d.printed["t_min[usec]"] == pytest.approx(1.0) and d.printed["t_max[usec]"] == pytest.approx(1.2)
    assert close(d.number, 1.1 * U)
    assert close(d.steps[0].value, 1.2 * U)              # the slowest rank's loop
    assert close(d.steps[1].value, (1209.8 - 10) / 1000 * U)  # latest end - latest start, per call


def test_skampi_trims_a_quarter_each_side_of_the_valid_slowest_times():
    slow = [1, 2, 3, 100, 4, 5, 9, 10, 11, 12]           # the 100 started late: not valid
    flags = [0, 0, 0, LATE, 0, 0, 0, 0, 0, 0]
    starts = [100 * i for i in range(10)]
    rank0 = spans([0] * 4, [50] * 4, phase=CALIBRATION) + spans(starts, [s + 0.5 for s in starts])
    rank1 = spans([0] * 4, [60] * 4, phase=CALIBRATION) + spans(starts, [s + v for s, v in zip(starts, slow)],
                                                                flags=flags)
    d = skampi.derive(series("skampi", "allreduce", 8, {0: rank0, 1: rank1}, start="slot", cache="cycling"))
    # valid: 1 2 3 4 5 9 10 11 12 (n = 9, n/4 = 2 dropped each side): 3 4 5 9 10
    assert d.printed["count"] == 9
    assert close(d.number, 6.2 * U)
    # k = 5: sqrt(|231 - 31^2/5| / 20) µs
    assert d.printed["std_error (us)"] == pytest.approx(round(math.sqrt(38.8 / 20), 1))
    assert d.printed["per rank (us)"] == [0.5, 6.2]
    assert close(d.reading, 5 * U)                       # the median of the nine


def test_skampi_pingpong_is_a_whole_round_trip():
    rank0 = spans([0, 10, 20, 30], [2, 14, 26, 40])      # 2 4 6 10
    rank1 = spans([0, 10, 20, 30], [1, 17, 23, 39])      # 1 7 3 9
    d = skampi.derive(series("skampi", "pingpong", 8, {0: rank0, 1: rank1}, start="back_to_back"))
    # slowest 2 7 6 10; n = 4 drops one each side: (6 + 7) / 2
    assert close(d.number, 6.5 * U)
    assert [(s.cause, round(s.value / U, 9)) for s in d.steps] == [
        ("definition", 3.25), ("statistic", 3.25), ("ranks", 2.5)]


def test_mpptest_takes_the_minimum_of_the_accepted_loop_means():
    loops = [(0, 100), (200, 280), (400, 490), (600, 720)]  # 2, 1.6 (rejected), 1.8, 2.4 µs a call
    rows = [(s * U, e * U, MEASURED, 50, REJECTED if i == 1 else 0, i) for i, (s, e) in enumerate(loops)]
    d = mpptest.derive(series("mpptest", "pingpong", 1000, {0: rows}, timing="loop", start="back_to_back"))
    assert close(d.number, 0.9 * U)                      # half of 1.8
    assert d.printed["rate (B/s)"] == pytest.approx(2 * 1000 / (1.8 * U))
    assert close(d.reading, 1.0 * U)                     # half the median 2.0


def test_mpptest_collective_uses_rank_0s_loops():
    r0 = [(0, 100), (200, 290), (400, 520)]               # 2, 1.8, 2.4 per call
    r1 = [(0, 110), (200, 300), (400, 505)]               # 2.2, 2.0, 2.1
    rows = {k: [(s * U, e * U, MEASURED, 50, 0, i) for i, (s, e) in enumerate(v)] for k, v in ((0, r0), (1, r1))}
    d = mpptest.derive(series("mpptest", "allreduce", 8, rows, timing="loop", start="back_to_back"))
    assert close(d.number, 1.8 * U)
    assert [s.cause for s in d.steps] == ["statistic", "ranks", "overlap"]
    assert close(d.steps[0].value, 2.0 * U) and close(d.steps[1].value, 2.2 * U)
    # latest end - latest start per call: 110/50, 100/50, 120/50 -> median 2.2
    assert close(d.steps[2].value, 2.2 * U)


def test_mpibench_collective_is_the_mean_of_each_repetitions_slowest_rank():
    rows = {0: spans([0, 10, 20], [1, 12, 23]), 1: spans([0, 10, 20], [2, 11, 25])}
    d = mpibench.derive(series("mpibench", "bcast", 8, rows, start="barrier_before"))
    assert close(d.number, 3 * U)                        # slowest 2, 2, 5
    assert d.printed["minimum (us)"] == pytest.approx(2)
    assert close(d.steps[0].value, 2 * U)


def test_mpibench_point_to_point_averages_every_message_on_the_global_clock():
    # rank 1's clock is 100 µs ahead: its local times are global + 100
    rank0 = spans([0, 10], [2.0, 12.6])                  # its send starts, its receive ends
    rank1 = spans([101.2, 111.6], [101, 111.5])          # its send starts, its receive ends
    s = series("mpibench", "pingpong", 8, {0: rank0, 1: rank1}, offsets={1: 100 * U}, start="barrier_before")
    d = mpibench.derive(s)
    # there: 1 - 0, 11.5 - 10; back: 2.0 - 1.2, 12.6 - 11.6
    assert close(d.number, (1 + 1.5 + 0.8 + 1.0) / 4 * U)
    assert d.printed["minimum (us)"] == pytest.approx(0.8) and d.printed["messages"] == 4
    assert close(d.reading, 1.0 * U)
