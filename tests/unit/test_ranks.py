# SPDX-License-Identifier: BSD-3-Clause
"""Slowest ranks of collectives (mpiscope.stats.ranks)."""

import json

import numpy as np
import pyarrow as pa
import pytest

from mpiscope.stats.ranks import rank_times, slowest_ranks
from mpiscope.store.samples import series_samples, split_series
from mpiscope.store.ingest import SCHEMA, ingest
from mpiscope.store.run import Run
from rawgen import SMALL, Clock, RunBuilder, SeriesSpec

US = 1e-6


def _table(end, start=None, sync="window", valid=None, bench="allreduce", period=1e-3):
    """Rows of one collective series: end[i, r] is rank r's end of rep i,
    relative to the agreed start of rep i (global = local here)."""
    nrep, nr = end.shape
    sched0 = 10.0 + period * np.arange(nrep)
    start = np.zeros_like(end) if start is None else start
    valid = np.ones_like(end, dtype=bool) if valid is None else valid
    rows = {name: [] for name in SCHEMA.names}
    for r in range(nr):
        t_s = sched0 + start[:, r]
        t_e = sched0 + end[:, r]
        t_sched = sched0 if sync == "window" else np.full(nrep, np.nan)
        cols = {"bench": [bench] * nrep, "algo": ["mpi"] * nrep, "size": [8] * nrep,
                "launch": [0] * nrep, "rep": list(range(nrep)), "rank": [r] * nrep,
                "role": ["member"] * nrep, "peer": [-1] * nrep,
                "t_start_local": t_s, "t_end_local": t_e, "t_sched_local": t_sched,
                "t_start": t_s, "t_end": t_e, "t_sched": t_sched, "valid": valid[:, r]}
        for k, v in cols.items():
            rows[k].extend(list(v))
    return pa.table(rows, schema=SCHEMA)


def _late_rank_2(nrep=200, sync="window", seed=0):
    rng = np.random.default_rng(seed)
    base = 5 * US + rng.uniform(0, 1 * US, size=(nrep, 4))
    base[:, 2] += 10 * US
    return base


@pytest.mark.parametrize("sync", ["window", "barrier"])
def test_rank_always_10us_late_is_found(sync):
    end = _late_rank_2()
    r = slowest_ranks(_table(end, sync=sync))
    assert r["sync"] == sync and r["n_reps"] == 200 and r["n_invalid"] == 0
    assert r["last_order"] == [2]
    by_rank = {x["rank"]: x for x in r["ranks"]}
    assert by_rank[2]["last_count"] == 200 and by_rank[2]["last_share"] == 1.0
    assert all(by_rank[k]["last_count"] == 0 for k in (0, 1, 3))
    # It trails the second-to-last by 10 us plus its jitter minus theirs.
    margins = end[:, 2] - end[:, [0, 1, 3]].max(axis=1)
    assert by_rank[2]["margin_median_s"] == pytest.approx(np.median(margins), rel=1e-6)
    assert r["margin_median_s"] == pytest.approx(np.median(margins), rel=1e-6)
    assert 9.5 * US < r["margin_median_s"] < 10.5 * US
    assert by_rank[2]["margin_max_s"] == pytest.approx(margins.max(), rel=1e-6)
    for k in range(4):
        assert by_rank[k]["time_min_s"] == pytest.approx(end[:, k].min(), abs=1e-12)
        assert by_rank[k]["time_median_s"] == pytest.approx(np.median(end[:, k]), abs=1e-12)
        assert by_rank[k]["time_max_s"] == pytest.approx(end[:, k].max(), abs=1e-12)
    json.dumps(r, allow_nan=False)


def test_barrier_uses_each_ranks_own_duration():
    # Rank 0 ends last on the clock but started late: its duration is short.
    # Rank 1 started first and runs longest.
    end = np.array([[9.0, 8.0, 3.0], [9.5, 8.0, 3.0]]) * US
    start = np.array([[5.0, 0.0, 0.0], [5.0, 0.0, 1.0]]) * US
    r = slowest_ranks(_table(end, start, sync="barrier"))
    assert r["last_order"] == [1]
    # Durations (4, 8, 3) and (4.5, 8, 2): margins 4 and 3.5.
    assert r["margin_median_s"] == pytest.approx(3.75 * US, rel=1e-6)
    w = slowest_ranks(_table(end, start, sync="window"))
    assert w["last_order"] == [0]                            # window: latest end wins


def test_hand_computed_small_case_ties_and_invalid():
    end = np.array([[1.0, 3.0, 2.0],      # rank 1 last by 1
                    [4.0, 1.0, 4.0],      # tie: the lowest rank, margin 0
                    [1.0, 2.0, 7.0],      # rank 2 last by 5
                    [9.0, 9.0, 9.0]]) * US
    valid = np.ones_like(end, dtype=bool)
    valid[3, 1] = False                   # a late rank: the repetition is left out
    r = slowest_ranks(_table(end, valid=valid))
    assert r["n_reps"] == 3 and r["n_invalid"] == 1
    ranks = {x["rank"]: x for x in r["ranks"]}
    assert [ranks[k]["last_count"] for k in range(3)] == [1, 1, 1]
    assert ranks[0]["margin_median_s"] == 0.0
    assert ranks[1]["margin_median_s"] == pytest.approx(1 * US)
    assert ranks[2]["margin_median_s"] == pytest.approx(5 * US)
    assert r["margin_median_s"] == pytest.approx(1 * US)
    assert (ranks[2]["time_min_s"], ranks[2]["time_max_s"]) == (
        pytest.approx(2 * US), pytest.approx(7 * US))
    assert ranks[2]["time_median_s"] == pytest.approx(4 * US)
    assert r["last_order"] == [0, 1, 2]


def test_rank_times_matrix():
    end = _late_rank_2(nrep=5)
    rt = rank_times(_table(end))
    assert rt.ranks.tolist() == [0, 1, 2, 3] and rt.rep.tolist() == [0, 1, 2, 3, 4]
    assert rt.times == pytest.approx(end, abs=1e-12)
    assert rt.valid.all() and rt.sync == "window"


def test_empty_series():
    r = slowest_ranks(_table(np.empty((0, 3))))
    assert r["n_reps"] == 0 and r["ranks"] == [] and r["margin_median_s"] is None


@pytest.mark.parametrize("sync", ["window", "barrier"])
def test_agrees_with_samples_on_a_synthetic_run(tmp_path, sync):
    # rawgen: the last rank ends SMALL after the one before it; rank 1 is
    # late in repetition 1, whose sample is invalid.
    rb = RunBuilder(tmp_path / "run", nranks=4, sync=sync,
                    clocks={1: Clock(0.5, 2.0 ** -12, 100.0), 2: Clock(-0.25),
                            3: Clock(1.0, -2.0 ** -14, 90.0)})
    rb.add(SeriesSpec("allreduce", 8, [3 * US, 4 * US, 5 * US, 6 * US, 3.5 * US],
                      late=((1, 1),)))
    rb.add(SeriesSpec("ring", 8, [2 * US, 2.5 * US, 3 * US]))
    rb.write()
    table = ingest(rb.run_dir, {})
    for (bench, algo, size), rows in split_series(table).items():
        r = slowest_ranks(rows)
        s = series_samples(rows, bench, size, algo, Run.from_context({}))
        assert r["n_reps"] == len(s) and r["n_invalid"] == s.n_invalid
        assert r["last_order"] == [3]
        assert r["margin_median_s"] == pytest.approx(SMALL, rel=1e-6)
        # The slowest rank's time is the sample.
        rt = rank_times(rows)
        assert np.nanmax(rt.times[rt.valid], axis=1) == pytest.approx(s.values, rel=1e-9)
        assert set(s.source.tolist()) == {"3"}
