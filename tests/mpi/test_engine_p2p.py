# SPDX-License-Identifier: BSD-3-Clause
"""Point-to-point benchmarks on real Open MPI ranks."""

import numpy as np

from mpiscope.store import samples

from mpiscope.store import ingest as store
from runcli import run_ok


def test_one_way_time_agrees_with_half_ping_pong(tmp_path):
    run, _ = run_ok("-n", 2, "--bench", "pingpong,oneway", "--sizes", 8, "--reps-min", 200,
                    out=tmp_path)
    table, _ = store.load(run)
    half_rtt = samples.sample_values(table, "pingpong", 8).values
    one_way = samples.sample_values(table, "oneway", 8).values
    assert np.all(half_rtt > 0) and np.median(one_way) > 0
    # No speed asserted (load only adds time): a one-way trip is one leg of a round trip,
    # so the fastest one is no slower than the fastest whole round trip (plus the clock
    # sync's error, well under a microsecond on one host).
    assert one_way.min() <= 2 * half_rtt.min() + 1e-6, (one_way.min(), half_rtt.min())


def test_every_point_to_point_pattern_on_four_ranks(tmp_path):
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("# initiator responder\n0 3\n2 1\n")
    run, summary = run_ok("-n", 4, "--bench", "pingpong,oneway,multipair,pairs,ring,bw,bibw",
                          "--pairs", pairs, "--sizes", "8,64K", "--reps-max", 50, "--check",
                          out=tmp_path / "runs")
    table, _ = store.load(run)
    for bench in ("pingpong", "oneway", "multipair", "pairs", "ring", "bw", "bibw"):
        for size in (8, 65536):
            s = samples.sample_values(table, bench, size)
            assert len(s) > 0 and np.all(s.values > 0), (bench, size)
    # multipair: both directions of the pairs 0<->2 and 1<->3
    assert set(samples.sample_values(table, "multipair", 8).source) == {"0->2", "2->0", "1->3", "3->1"}
    assert set(samples.sample_values(table, "pairs", 8).source) == {"0->3", "3->0", "2->1", "1->2"}
    # bandwidth values are bytes per second: 64 KiB messages move faster than 8 B ones
    assert np.median(samples.sample_values(table, "bw", 65536).values) > \
        np.median(samples.sample_values(table, "bw", 8).values)


def test_harness_benchmarks_on_real_ranks(tmp_path):
    run, _ = run_ok("-n", 2, "--bench", "empty,pingpong_loop", "--sizes", 8, "--reps-max", 100,
                    out=tmp_path)
    table, loaded = store.load(run)
    context = loaded.context
    empty = samples.sample_values(table, "empty", 0)      # sizeless: measured once, at size 0
    loop = samples.sample_values(table, "pingpong_loop", 8)
    assert len(empty) > 0 and len(loop) > 0 and np.all(empty.values > 0)
    # two timer reads with nothing between them cost far less than a round trip
    assert np.median(empty.values) < np.median(loop.values)
    assert [s["window_msgs"] for s in context["series"] if s["bench"] == "pingpong_loop"] == [64]
