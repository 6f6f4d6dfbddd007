# SPDX-License-Identifier: BSD-3-Clause
"""Samples derived from raw rows (store/samples.py) on synthetic runs with
known clocks: every benchmark's rule (pingpong's half round trip, oneway on
global times, bandwidths, collectives' slowest rank), launches pooled or
filtered, several algorithms, and schema 1 and 2 files alike."""

import numpy as np
import pyarrow.compute as pc
import pytest

from mpiscope.common.errors import UsageError
from mpiscope.store.samples import BANDWIDTH_RULES, RULES, sample_values, unit_of
from mpiscope.store.ingest import ingest
from rawgen import COLLECTIVES, Clock, RunBuilder, SeriesSpec

US = 1e-6
CLOCKS = {1: Clock(0.5, 2.0 ** -12, 100.0), 2: Clock(-0.25), 3: Clock(3.0, -1e-6, 80.0)}


def _check(table, rb, bench, size, algo=None, launch=None):
    s = sample_values(table, bench, size, launch=launch, algo=algo)
    got = {k: v for k, v in zip(zip(s.launch.tolist(), s.rep.tolist(), s.source.tolist()),
                                s.values.tolist())}
    exp = {}
    n_invalid = 0
    for (b, a, sz, la), e in rb.expected.items():
        if b == bench and sz == size and (launch is None or la == launch) and \
                (algo is None or a == algo):
            exp.update({k: v for k, (v, ok) in e.samples.items() if ok})
            n_invalid += sum(1 for k, (_, ok) in e.samples.items() if not ok)
    assert set(got) == set(exp)
    for k, v in exp.items():
        assert got[k] == pytest.approx(v, rel=1e-9, abs=1e-12), k
    assert s.n_invalid == n_invalid
    assert len(s.values) == len(s.rep) == len(s.launch) == len(s.source)
    return s


def _run(tmp_path, specs, nranks=4, sync="window", **kw):
    rb = RunBuilder(tmp_path / "run", nranks=nranks, sync=sync, clocks=CLOCKS, **kw)
    for spec in specs:
        rb.add(spec)
    rb.write()
    return ingest(rb.run_dir, {}), rb


@pytest.mark.parametrize("sync", ["window", "barrier"])
def test_pingpong_half_round_trip(tmp_path, sync):
    table, rb = _run(tmp_path, [SeriesSpec("pingpong", 8, [1 * US, 2 * US, 4 * US, 3 * US],
                                           late=((1, 1),))], sync=sync)
    s = _check(table, rb, "pingpong", 8)
    assert s.source.tolist() == ["0->1"] * 3
    assert s.rep.tolist() == [0, 2, 3]
    assert s.n_invalid == 1  # the responder was late: the round trip is not trusted


def test_oneway_uses_global_times(tmp_path):
    table, rb = _run(tmp_path, [SeriesSpec("oneway", 8, [1 * US, 2 * US, 3 * US],
                                           late=((0, 2),))])
    s = _check(table, rb, "oneway", 8)
    assert s.values.tolist() == pytest.approx([1 * US, 2 * US], rel=1e-9)


def test_multipair_both_directions(tmp_path):
    table, rb = _run(tmp_path, [SeriesSpec("multipair", 64,
                                           [(1 * US, 2 * US), (3 * US, 4 * US)],
                                           late=((3, 0),))])
    s = _check(table, rb, "multipair", 64)
    # 2 pairs × 2 directions × 2 reps, minus pair 1↔3 at rep 0 (both directions).
    assert len(s.values) == 6 and s.n_invalid == 2
    assert sorted(set(s.source.tolist())) == ["0->2", "1->3", "2->0", "3->1"]


def test_pairs_user_listed_with_idle_ranks(tmp_path):
    table, rb = _run(tmp_path, [SeriesSpec("pairs", 8, [(1 * US, 1.5 * US)] * 3,
                                           pairs=((3, 1),))])
    s = _check(table, rb, "pairs", 8)
    assert sorted(set(s.source.tolist())) == ["1->3", "3->1"]


@pytest.mark.parametrize("bench,factor", [("bw", 1), ("bibw", 2)])
def test_bandwidth(tmp_path, bench, factor):
    table, rb = _run(tmp_path, [SeriesSpec(bench, 4096, [1e9, 2e9, 4e9], window_msgs=32)])
    s = _check(table, rb, bench, 4096)
    # Independently: bytes moved / the initiator's time for the window.
    rows = table.filter(pc.equal(table["role"], "initiator"))
    dur = rows["t_end_local"].to_numpy() - rows["t_start_local"].to_numpy()
    np.testing.assert_allclose(s.values, 4096 * 32 * factor / dur, rtol=1e-12)


def test_bandwidth_window_msgs_defaults_to_64(tmp_path):
    table, rb = _run(tmp_path, [SeriesSpec("bw", 1024, [1e9, 2e9])])
    rows = table.filter(pc.equal(table["role"], "initiator"))
    dur = rows["t_end_local"].to_numpy() - rows["t_start_local"].to_numpy()
    bare = table.replace_schema_metadata({})  # no context: no series metadata
    s = sample_values(bare, "bw", 1024)
    np.testing.assert_allclose(s.values, 1024 * 64 / dur, rtol=1e-12)


def test_harness_benchmarks(tmp_path):
    table, rb = _run(tmp_path, [SeriesSpec("empty", 0, [40e-9, 55e-9, 45e-9], late=((1, 2),)),
                                SeriesSpec("pingpong_loop", 8, [0.4 * US, 0.5 * US], window_msgs=16)])
    s = _check(table, rb, "empty", 0)
    assert s.values.tolist() == pytest.approx([40e-9, 55e-9], rel=1e-6)
    s = _check(table, rb, "pingpong_loop", 8)
    # Independently: the initiator's time for 16 round trips over 32 messages.
    rows = table.filter(pc.and_(pc.equal(table["role"], "initiator"), pc.equal(table["bench"], "pingpong_loop")))
    dur = rows["t_end_local"].to_numpy() - rows["t_start_local"].to_numpy()
    np.testing.assert_allclose(s.values, dur / 32, rtol=1e-12)


@pytest.mark.parametrize("sync", ["window", "barrier"])
@pytest.mark.parametrize("bench", list(COLLECTIVES) + ["ring"])
def test_collectives_and_ring(tmp_path, bench, sync):
    table, rb = _run(tmp_path, [SeriesSpec(bench, 8, [3 * US, 5 * US, 4 * US],
                                           late=((2, 1),))], sync=sync)
    s = _check(table, rb, bench, 8)
    assert s.source.tolist() == ["3", "3"]  # the last rank to finish
    assert s.n_invalid == 1


def test_collective_window_value_is_latest_end_minus_agreed_start(tmp_path):
    table, rb = _run(tmp_path, [SeriesSpec("allreduce", 8, [3 * US])])
    end = table["t_end"].to_numpy().max()
    sched0 = table.filter(pc.equal(table["rank"], 0))["t_sched"].to_numpy()[0]
    s = sample_values(table, "allreduce", 8)
    assert s.values[0] == end - sched0


def test_launch_filter_and_pooling(tmp_path):
    table, rb = _run(tmp_path, [SeriesSpec("allreduce", 8, [3 * US, 5 * US], launches=(0, 1))],
                     launches=(0, 1))
    assert len(sample_values(table, "allreduce", 8).values) == 4
    s = _check(table, rb, "allreduce", 8, launch=1)
    assert s.launch.tolist() == [1, 1]


def test_several_algorithms(tmp_path):
    table, rb = _run(tmp_path, [SeriesSpec("allreduce", 8, [3 * US]),
                                SeriesSpec("allreduce", 8, [7 * US], algo="ring")])
    with pytest.raises(UsageError, match="mpi, ring"):
        sample_values(table, "allreduce", 8)
    _check(table, rb, "allreduce", 8, algo="ring")
    assert sample_values(table, "allreduce", 8, algo="mpi").values.tolist() == \
        pytest.approx([3 * US], rel=1e-9)


def test_missing_clock_model_makes_samples_invalid(tmp_path):
    # A rank that crashed before writing any sync block has no global times.
    table, rb = _run(tmp_path, [SeriesSpec("oneway", 8, [1 * US])], nranks=2)
    part = rb.run_dir / "raw/launch-0/rank-1.raw"
    from mpiscope.store.rawfile import read_raw
    from rawgen import write_raw
    raw = read_raw(part)
    write_raw(part, raw.header, [b for b in raw.blocks if b.meta["kind"] == "series"])
    table = ingest(rb.run_dir, {})
    s = sample_values(table, "oneway", 8)
    assert len(s.values) == 0 and s.n_invalid == 1


def test_absent_series_is_empty(tmp_path):
    table, _ = _run(tmp_path, [SeriesSpec("allreduce", 8, [3 * US])])
    s = sample_values(table, "bcast", 8)
    assert len(s.values) == 0 and s.n_invalid == 0 and s.source.tolist() == []


def test_unit_and_kind():
    assert unit_of("bandwidth") == unit_of("bidirectional_bandwidth") == "B/s"
    for rule in RULES - BANDWIDTH_RULES:
        assert unit_of(rule) == "s"


def test_samples_carry_their_rule(tmp_path):
    table, _ = _run(tmp_path, [SeriesSpec("allreduce", 8, [3 * US]), SeriesSpec("ring", 8, [3 * US]),
                               SeriesSpec("pingpong", 8, [2 * US]), SeriesSpec("bw", 8, [2 * US])])
    for bench in ("allreduce", "ring"):
        s = sample_values(table, bench, 8)
        assert s.collective and s.unit == "s"
    pp, bw = sample_values(table, "pingpong", 8), sample_values(table, "bw", 8)
    assert not pp.collective and pp.unit == "s" and pp.rule == "half_round_trip"
    assert not bw.collective and bw.unit == "B/s"


def test_schema1_and_schema2_files_give_the_same_samples(tmp_path):
    specs = [SeriesSpec("pingpong", 8, [2 * US, 3 * US]), SeriesSpec("bibw", 64, [1e9, 2e9]),
             SeriesSpec("oneway", 8, [US]), SeriesSpec("multipair", 8, [(4 * US, 5 * US)]),
             SeriesSpec("allreduce", 8, [3 * US, 5 * US])]
    tables = []
    for schema in (1, 2):
        rb = RunBuilder(tmp_path / f"s{schema}", nranks=4, clocks=CLOCKS, schema=schema)
        for spec in specs:
            rb.add(spec)
        rb.write()
        tables.append(ingest(rb.run_dir, {}))
    for spec in specs:
        old, new = (sample_values(t, spec.bench, spec.size) for t in tables)
        assert old.rule == new.rule and old.values.tolist() == new.values.tolist(), spec.bench
        assert old.source.tolist() == new.source.tolist() and old.n_invalid == new.n_invalid
