# SPDX-License-Identifier: BSD-3-Clause
"""The numbers IMB-MPI1 prints (src_c/IMB_output.c, IMB_calculate_times):
- PingPong: each of ranks 0 and 1 times its loop of n round trips; t[usec]
  is the larger of the two loop means, halved, and Mbytes/sec is size /
  t (10^6 bytes a second), IMB's bandwidth;
- Barrier, Sendrecv (the ring) and Exchange: each rank's loop of n calls
  / n; Sendrecv and Exchange also print Mbytes/sec, 2 and 4 x size / t_max;
- the other collectives: each rank's mean over its n timed calls;
then t_min, t_max and t_avg over the ranks (t_avg is the number compared).
The measured call counts; the calibration and warm-up calls do not."""

from __future__ import annotations

from mpiscope.methods.derivation import Derivation, Step, common_start, median, rank_mean_steps, rank_means, us
from mpiscope.methods.stored import MethodSeries

PINGPONG_BANDWIDTH = "IMB's bandwidth is size / PingPong's time: a ping-pong, not a window of messages"
# The messages per call IMB's Mbytes/sec counts (its SCALE_BW_DOUBLE, SCALE_BW_FOUR).
SCALE_BW = {"ring": 2, "exchange": 4}


def _pingpong(s: MethodSeries, g) -> Derivation:
    n = int(g.calls[0, 0])
    halves = g.durations[:, 0] / n / 2
    t, t0 = float(halves.max()), float(halves[g.row(0)])
    printed = {"#repetitions": n, "t[usec]": us(t), "Mbytes/sec": s.size / t / 1e6}
    what = "the larger of the two ranks' loop means → rank 0's"
    if s.bench == "pingpong":
        return Derivation(s, "s", t, printed, n, [Step("ranks", what, t0)])
    return Derivation(s, "B/s", s.size / t, printed, n, [Step("ranks", what, s.size / t0)], PINGPONG_BANDWIDTH)


def derive(s: MethodSeries) -> Derivation | None:
    g = s.grid()
    if g.start.size == 0:
        return None
    if s.bench in ("pingpong", "bw"):
        return _pingpong(s, g)
    means = rank_means(g)
    n = int(g.calls.sum(axis=1)[0])
    printed = {
        "#repetitions": n,
        "t_min[usec]": us(means.min()),
        "t_max[usec]": us(means.max()),
        "t_avg[usec]": us(means.mean()),
    }
    if s.bench in SCALE_BW:
        printed["Mbytes/sec"] = SCALE_BW[s.bench] * s.size / float(means.max()) / 1e6
    if s.timing == "loop":  # Barrier, Sendrecv, Exchange: one loop per rank
        steps = [
            Step("ranks", "mean over the ranks (t_avg) → the slowest rank (t_max)", float(means.max())),
            Step(
                "overlap",
                "each rank timed from its own start → from the last rank's start",
                median(common_start(g, g.calls[0])),
            ),
        ]
        return Derivation(s, "s", float(means.mean()), printed, n, steps)
    return Derivation(s, "s", float(means.mean()), printed, n, rank_mean_steps(s, g))
