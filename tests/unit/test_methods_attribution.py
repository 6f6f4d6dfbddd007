# SPDX-License-Identifier: BSD-3-Clause
"""The difference between a tool's number and mpiscope's median split into
terms (methods/attribution.py): each term the hand-computed difference of
two numbers, the terms adding up to the difference exactly."""

import math

import numpy as np

from mpiscope.methods import mpptest, osu, skampi
from mpiscope.methods.attribution import CAUSES, attribute
from mpiscope.methods.stored import MEASURED
from methods_data import series

U = 1e-6


def spans(starts, ends, calls=1):
    return [(s * U, e * U, MEASURED, calls, 0, 0) for s, e in zip(starts, ends)]


def values(a):
    return [(t.cause, round(t.value / U, 9)) for t in a.terms]


def test_a_back_to_back_tool_overlap_then_unexplained():
    # OSU latency: round trips 2, 4, 9 µs -> 2.5 (mean, halved), median 2.0
    d = osu.derive(series("osu", "pingpong", 8, {0: spans([10, 20, 30], [12, 24, 39])}, start="back_to_back"))
    refs = {"ref_barrier": np.array([1.9, 2.1, 2.2]) * U, "ref_b2b": np.array([1.7, 1.8, 1.9]) * U}
    a = attribute(d, refs, 2.3 * U)
    # statistic 2.5 - 2.0; overlap 1.8 - 2.1 (back to back - barrier); barrier 2.1 - 2.3 (a barrier
    # start - mpiscope's median); unexplained the rest: OSU's 2.0 - the back-to-back reference's 1.8
    assert values(a) == [("statistic", 0.5), ("overlap", -0.3), ("barrier", -0.2), ("unexplained", 0.2)]
    assert math.isclose(sum(t.value for t in a.terms), a.difference, abs_tol=1e-18)
    assert list(a.by_cause()) == ["statistic", "barrier", "overlap", "unexplained"]


def test_a_barrier_separated_tool_is_compared_with_the_barrier_reference():
    coll = {0: spans([1.0, 11.5, 20], [2.0, 13.5, 23]), 1: spans([0.5, 11, 20], [3.5, 14, 26])}
    d = osu.derive(series("osu", "allreduce", 8, coll))
    a = attribute(d, {"ref_barrier": np.array([2.0]) * U, "ref_b2b": np.array([1.0]) * U}, 2.2 * U)
    # 3 -> 2.5 -> 3 -> 2.5 on OSU's rows; the barrier reference 2.0 - mpiscope's 2.2; no overlap (OSU's
    # calls are not back to back); unexplained: OSU's 2.5 against the barrier reference's 2.0
    assert values(a) == [("statistic", 0.5), ("ranks", -0.5), ("barrier", 0.5), ("barrier", -0.2),
                         ("unexplained", 0.5)]


def test_a_loop_timed_tool_gets_the_loops_tail_and_rotation():
    r0 = [(0, 100), (200, 290), (400, 520)]               # per call 2, 1.8, 2.4
    r1 = [(0, 110), (200, 300), (400, 505)]
    rows = {k: spans([s for s, _ in v], [e for _, e in v], calls=2) for k, v in ((0, r0), (1, r1))}
    s = series("mpptest", "bcast", 8, rows, timing="loop", start="back_to_back", root="rotating",
               params={"n_avg": 2})
    d = mpptest.derive(s)                                 # per call 50, 45, 60 (loops of 2 calls)
    b2b = np.array([1, 3, 1, 5, 2, 2]) * U                # loops of 2: means 2, 3, 2 -> median 2; calls: median 2
    refs = {"ref_barrier": np.array([4.0]) * U, "ref_b2b": b2b, "ref_rotate": np.array([3.0, 4.0, 5.0]) * U}
    a = attribute(d, refs, 40 * U)
    causes = [t.cause for t in a.terms]
    assert causes == ["statistic", "ranks", "overlap", "statistic", "overlap", "root_rotation", "barrier",
                      "unexplained"]
    between = values(a)[3:7]
    # loop tail 2 - 2; overlap 2 - 4 (b2b - barrier); rotation 4 - 2 (rotating - b2b, both back to
    # back); barrier 4 - 40 (the barrier reference - mpiscope's median)
    assert between == [("statistic", 0.0), ("overlap", -2.0), ("root_rotation", 2.0), ("barrier", -36.0)]
    assert math.isclose(sum(t.value for t in a.terms), a.difference, rel_tol=1e-12)


def test_cache_and_definition():
    rank0 = [(0, 2), (10, 14), (20, 26), (30, 40)]
    rank1 = [(0, 1), (10, 17), (20, 23), (30, 39)]
    rows = {k: spans([s for s, _ in v], [e for _, e in v]) for k, v in ((0, rank0), (1, rank1))}
    d = skampi.derive(series("skampi", "pingpong", 8, rows, start="back_to_back", cache="cycling"))
    refs = {"ref_barrier": np.array([2.0]) * U, "ref_b2b": np.array([2.0]) * U, "ref_cycle": np.array([2.5]) * U}
    a = attribute(d, refs, 1.8 * U)
    assert values(a) == [("definition", 3.25), ("statistic", 0.0), ("ranks", 0.75), ("overlap", 0.0),
                         ("cache", 0.5), ("barrier", 0.2), ("unexplained", 0.0)]
    assert set(a.by_cause()) <= set(CAUSES)


def test_another_quantity_is_all_definition():
    rows = {0: spans([5], [2005], calls=1000), 1: spans([5], [2105], calls=1000)}
    from mpiscope.methods import imb

    d = imb.derive(series("imb", "bw", 1000, rows, timing="loop", start="back_to_back"))
    a = attribute(d, {"ref_barrier": np.array([1.0]) * U}, 5e8)
    assert [t.cause for t in a.terms] == ["ranks", "definition"]
    assert math.isclose(a.terms[-1].value, 1000 / U - 5e8)
    assert math.isclose(sum(t.value for t in a.terms), a.difference, rel_tol=1e-12)


def test_time_slots_are_no_barrier():
    # SKaMPI's collectives start in time slots, as mpiscope's window starts: no barrier term
    rows = {0: spans([0, 10, 20, 30], [1, 11, 21, 31]), 1: spans([0, 10, 20, 30], [2, 12, 22, 32])}
    d = skampi.derive(series("skampi", "allreduce", 8, rows, start="slot", cache="cycling"))
    refs = {"ref_barrier": np.array([1.5]) * U, "ref_cycle": np.array([1.7]) * U}
    a = attribute(d, refs, 1.9 * U)
    # 2 (slowest, trimmed) -> 2 (median); cache 1.7 - 1.5; unexplained 2 - 1.9 - 0.2
    assert values(a) == [("statistic", 0.0), ("cache", 0.2), ("unexplained", -0.1)]


def test_launches_are_averaged_and_still_add_up():
    from mpiscope.methods.result import _combine

    refs = {"ref_barrier": np.array([2.0]) * U}
    made = []
    for launch, ends in enumerate(([12, 24, 39], [13, 23, 33])):   # round trips 2 4 9 and 3 3 3
        d = osu.derive(series("osu", "pingpong", 8, {0: spans([10, 20, 30], ends)}, launch=launch))
        made.append(attribute(d, refs, 2.0 * U))
    a = _combine(made)
    assert math.isclose(a.derivation.number, (2.5 + 1.5) / 2 * U)
    assert math.isclose(sum(t.value for t in a.terms), a.difference, abs_tol=1e-18)
    assert [t.cause for t in a.terms] == [t.cause for t in made[0].terms]
