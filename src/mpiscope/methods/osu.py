# SPDX-License-Identifier: BSD-3-Clause
"""The numbers the OSU Micro-Benchmarks 7.4 print (osu_latency, osu_bw and
the blocking collectives; its util/osu_util_mpi.c print_stats):
- latency: the mean round trip of the timed iterations, halved, on rank 0;
- bandwidth: size x 64 x iterations / the sum of the windows' times (MB/s
  of 10^6 bytes);
- collectives: each rank's mean over the iterations, then the mean over
  ranks ("Avg Latency"); with -f also their minimum and maximum over ranks.
Only the timed iterations count (after `skip`). osu_reduce_scatter's size
is the whole vector: p x the engine's reduce_scatter_block size ("Size")."""

from __future__ import annotations

from mpiscope.methods.derivation import Derivation, Step, median, rank_mean_steps, rank_means, us
from mpiscope.methods.stored import WINDOW, MethodSeries


def derive(s: MethodSeries) -> Derivation | None:
    g = s.grid()
    if g.start.size == 0:
        return None
    if s.bench in ("pingpong", "bw"):
        d = g.durations[g.row(0)]
        if s.bench == "pingpong":
            lat = d.mean() / 2
            return Derivation(
                s,
                "s",
                lat,
                {"Latency (us)": us(lat)},
                len(d),
                [Step("statistic", "mean over the round trips → median", median(d) / 2)],
            )
        window = s.params.get("window", WINDOW)
        bw = s.size * window * len(d) / d.sum()
        return Derivation(
            s,
            "B/s",
            bw,
            {"Bandwidth (MB/s)": bw / 1e6},
            len(d),
            [Step("statistic", "total over the windows → their median window", s.size * window / median(d))],
        )
    means = rank_means(g)
    printed = {
        "Avg Latency(us)": us(means.mean()),
        "Min Latency(us)": us(means.min()),
        "Max Latency(us)": us(means.max()),
        "Iterations": g.start.shape[1],
    }
    if "tool_size" in s.params:
        printed["Size"] = int(s.params["tool_size"])
    return Derivation(s, "s", float(means.mean()), printed, g.start.shape[1], rank_mean_steps(s, g))
