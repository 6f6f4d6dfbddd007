# SPDX-License-Identifier: BSD-3-Clause
"""Ingest of raw files into samples.parquet (store/ingest.py) on synthetic
runs with known clocks: exact global times, drift recovered, crashed ranks,
several launches, which files win, and the Parquet schema and metadata."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from mpiscope.common.errors import UsageError
from mpiscope.store.ingest import SCHEMA, ingest, load, load_context
from rawgen import PERIOD, SMALL, T0, Clock, RunBuilder, SeriesSpec, context_for

US = 1e-6


def _rows(table, **eq):
    mask = None
    for k, v in eq.items():
        m = pc.equal(table[k], v)
        mask = m if mask is None else pc.and_(mask, m)
    return table.filter(mask)


def test_exact_global_times_with_offsets(tmp_path):
    # Dyadic offsets and times: the conversion must be exact, not just close.
    clocks = {1: Clock(0.5), 2: Clock(-0.25), 3: Clock(1024.125)}
    rb = RunBuilder(tmp_path / "run", nranks=4, clocks=clocks)
    rb.add(SeriesSpec("allreduce", 8, [2 * SMALL, 3 * SMALL, 5 * SMALL]))
    rb.write()
    table = ingest(rb.run_dir, context_for())
    assert table.num_rows == 12
    S = T0 + PERIOD * np.arange(3)
    for r in range(4):
        rows = _rows(table, rank=r)
        np.testing.assert_array_equal(rows["rep"].to_numpy(), [0, 1, 2])
        # Every rank's scheduled start is the same global instant.
        np.testing.assert_array_equal(rows["t_sched"].to_numpy(), S)
        np.testing.assert_array_equal(rows["t_start"].to_numpy(), S + SMALL * r)
        np.testing.assert_array_equal(rows["t_start_local"].to_numpy(),
                                      S + SMALL * r + clocks.get(r, Clock()).offset_s)


def test_drift_recovered(tmp_path):
    clocks = {1: Clock(0.5, 1e-5, 100.0), 2: Clock(-3.0, -2e-6, 50.0)}
    rb = RunBuilder(tmp_path / "run", nranks=3, clocks=clocks)
    rb.add(SeriesSpec("bcast", 8, [1 * US, 2 * US, 3 * US, 4 * US]))
    rb.write()
    table = ingest(rb.run_dir, context_for())
    S = T0 + PERIOD * np.arange(4)
    for r in range(3):
        rows = _rows(table, rank=r)
        np.testing.assert_allclose(rows["t_sched"].to_numpy(), S, rtol=0, atol=1e-12)
        np.testing.assert_allclose(rows["t_start"].to_numpy(), S + SMALL * r, rtol=0, atol=1e-12)
        if r:
            # The local times really were skewed: the test is not vacuous.
            assert np.abs(rows["t_start_local"].to_numpy() - (S + SMALL * r)).min() > 0.1


def test_newest_sync_block_wins(tmp_path):
    # The 'before' model is 1 s off; only the 'after' model gives the truth.
    rb = RunBuilder(tmp_path / "run", nranks=2, clocks={1: Clock(0.5)}, before_error_s=1.0)
    rb.add(SeriesSpec("oneway", 8, [1 * US]))
    rb.write()
    table = ingest(rb.run_dir, context_for())
    ctx = json.loads(table.schema.metadata[b"mpiscope.context"])
    assert ctx["clock"]["0"]["1"]["phase"] == "after"
    assert ctx["clock"]["0"]["1"]["model"] == {"offset_s": 0.5, "drift": 0.0, "ref_s": 0.0}
    assert _rows(table, rank=1)["t_start"].to_numpy()[0] == T0


def test_parquet_file_schema_and_metadata(tmp_path):
    rb = RunBuilder(tmp_path / "run", nranks=3, clocks={1: Clock(0.5)},
                    hosts={0: "a", 1: "a", 2: "b"}, inject={"offset_s": 0.5, "drift": 0,
                                                            "epoch_s": 0})
    rb.add(SeriesSpec("pingpong", 8, [1 * US, 2 * US, 3 * US], late=((0, 1),)))
    rb.add(SeriesSpec("bw", 1024, [1e9, 2e9], window_msgs=16))
    rb.write()
    given = context_for(run_id="r1")
    table = ingest(rb.run_dir, given)
    assert "series" not in given  # the caller's dict is not modified
    on_disk = pq.read_table(rb.run_dir / "samples.parquet")
    assert on_disk.schema.remove_metadata() == SCHEMA
    meta = on_disk.schema.metadata
    assert meta[b"mpiscope.schema_version"] == b"1"
    ctx = json.loads(meta[b"mpiscope.context"])
    assert ctx["run_id"] == "r1"
    # Rank 2 is idle in both point-to-point series: no rows.
    assert on_disk.num_rows == 2 * 3 + 2 * 2
    assert set(on_disk["rank"].to_pylist()) == {0, 1}
    # The table returned holds the strings dictionary-encoded, as written.
    assert pa.types.is_dictionary(table.schema.field("bench").type)
    assert on_disk.equals(table.cast(on_disk.schema))

    pp, bw = ctx["series"]
    assert pp == {"bench": "pingpong", "algo": "mpi", "size": 8, "launch": 0, "reps": 3,
                  "stop": "ci", "window_s": 0.001, "window_msgs": None, "count": 8,
                  "datatype": "MPI_BYTE", "invalid": 1,
                  "rule": "half_round_trip", "unit": "s", "timed_role": "initiator"}
    assert bw["window_msgs"] == 16 and bw["invalid"] == 0
    assert ctx["ranks"] == {"0": {"0": {"host": "a", "cpus": "0"}, "1": {"host": "a", "cpus": "1"},
                                  "2": {"host": "b", "cpus": "0"}}}
    c1 = ctx["clock"]["0"]["1"]
    assert c1["host"] == "a" and c1["residual_s"] == 2.5e-8 and c1["phase"] == "after"
    assert c1["recovery_error_s"] == {"start": 1e-8, "end": 2e-8}
    assert "recovery_error_s" not in ctx["clock"]["0"]["0"]
    assert ctx["timer"]["name"] == "tsc"
    assert ctx["mpi_library"].startswith("Open MPI v4.1.4")
    assert ctx["incomplete_ranks"] == []
    # Written atomically: no temporary file is left behind.
    assert sorted(p.name for p in rb.run_dir.iterdir()) == ["raw", "samples.parquet"]


def test_roles_and_peers(tmp_path):
    rb = RunBuilder(tmp_path / "run", nranks=2)
    rb.add(SeriesSpec("pingpong", 8, [1 * US]))
    rb.write()
    table = ingest(rb.run_dir, {})
    assert table.select(["rank", "role", "peer"]).to_pylist() == [
        {"rank": 0, "role": "initiator", "peer": 1}, {"rank": 1, "role": "responder", "peer": 0}]


def test_crashed_rank(tmp_path):
    rb = RunBuilder(tmp_path / "run", nranks=2, clocks={1: Clock(0.5)}, before_error_s=0.0)
    rb.add(SeriesSpec("allreduce", 8, [1 * US, 2 * US]))
    rb.add(SeriesSpec("allreduce", 16, [3 * US, 4 * US]))
    rb.write(crashed=[(0, 1)])
    assert (rb.run_dir / "raw/launch-0/rank-1.raw.part").exists()
    table = ingest(rb.run_dir, {})
    ctx = json.loads(table.schema.metadata[b"mpiscope.context"])
    assert ctx["incomplete_ranks"] == [[0, 1]]
    # Rank 1's last series was cut short: only rank 0 has rows at size 16.
    assert _rows(table, size=16)["rank"].to_pylist() == [0, 0]
    assert _rows(table, size=8)["rank"].to_pylist() == [0, 0, 1, 1]
    # Its only sync block is the 'before' one: that is the newest model.
    assert ctx["clock"]["0"]["1"]["phase"] == "before"
    assert _rows(table, rank=1)["t_start"].to_numpy()[0] == T0 + SMALL


def test_several_launches_with_their_own_clocks(tmp_path):
    clocks = {(0, 1): Clock(0.5), (1, 1): Clock(-7.0)}
    rb = RunBuilder(tmp_path / "run", nranks=2, clocks=clocks, launches=(0, 1))
    rb.add(SeriesSpec("oneway", 8, [1 * US, 2 * US], launches=(0, 1)))
    rb.write()
    table = ingest(rb.run_dir, {})
    ctx = json.loads(table.schema.metadata[b"mpiscope.context"])
    assert [(s["launch"], s["reps"]) for s in ctx["series"]] == [(0, 2), (1, 2)]
    assert ctx["clock"]["1"]["1"]["model"]["offset_s"] == -7.0
    for launch in (0, 1):
        rows = _rows(table, launch=launch, rank=1)
        np.testing.assert_array_equal(rows["t_start"].to_numpy(),
                                      T0 + 1024.0 * launch + PERIOD * np.arange(2))


def test_no_raw_files_gives_zero_rows(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    table = ingest(run, context_for(status="failed", error="mpirun exited with 1"))
    assert table.num_rows == 0 and table.cast(SCHEMA).schema.remove_metadata() == SCHEMA
    table2, loaded = load(run)
    ctx = loaded.context
    assert table2.num_rows == 0
    assert ctx["series"] == [] and ctx["incomplete_ranks"] == [] and ctx["status"] == "failed"


def test_raw_wins_over_part_and_stray_files_are_ignored(tmp_path):
    rb = RunBuilder(tmp_path / "run", nranks=2)
    rb.add(SeriesSpec("allreduce", 8, [1 * US]))
    rb.write()
    ldir = rb.run_dir / "raw/launch-0"
    (ldir / "rank-1.raw.part").write_bytes(b"MPSCRAW1")  # a leftover
    (ldir / "notes.txt").write_text("x")
    table = ingest(rb.run_dir, {})
    assert table.num_rows == 2
    ctx = json.loads(table.schema.metadata[b"mpiscope.context"])
    assert ctx["incomplete_ranks"] == []


def test_load_prefers_context_json_for_runner_keys(tmp_path):
    rb = RunBuilder(tmp_path / "run", nranks=2)
    rb.add(SeriesSpec("allreduce", 8, [1 * US]))
    rb.write()
    ingest(rb.run_dir, context_for(status="running"))
    (rb.run_dir / "context.json").write_text(json.dumps(
        context_for(status="completed", series="not this")))
    ctx = load(rb.run_dir)[1].context
    assert load_context(rb.run_dir) == ctx
    assert ctx["status"] == "completed"
    assert ctx["series"][0]["bench"] == "allreduce"


def test_load_unknown_schema_version(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    table = ingest(run, {})
    meta = dict(table.schema.metadata)
    meta[b"mpiscope.schema_version"] = b"99"
    pq.write_table(table.replace_schema_metadata(meta), run / "samples.parquet")
    with pytest.raises(UsageError, match="schema version 99"):
        load(run)
    with pytest.raises(UsageError, match="schema version 99"):
        load_context(run)


def test_load_missing_or_foreign_file(tmp_path):
    with pytest.raises(UsageError, match="no samples.parquet"):
        load(tmp_path)
    pq.write_table(pa.table({"x": [1]}), tmp_path / "samples.parquet")
    with pytest.raises(UsageError, match="not an mpiscope samples file"):
        load(tmp_path)


def test_series_described_by_a_participating_rank_when_rank_0_is_idle(tmp_path):
    rb = RunBuilder(tmp_path / "run", nranks=4)
    rb.add(SeriesSpec("pairs", 8, [(1 * US, 2 * US)] * 3, pairs=((3, 1),)))
    rb.write()
    # The generator's idle blocks say reps = 0: the entry must come from a rank with rows.
    table = ingest(rb.run_dir, {})
    ctx = json.loads(table.schema.metadata[b"mpiscope.context"])
    assert ctx["series"][0]["reps"] == 3
    assert set(table["rank"].to_pylist()) == {1, 3}


def test_null_clock_model_gives_nan_global_times(tmp_path):
    from mpiscope.store.rawfile import read_raw
    from rawgen import write_raw

    rb = RunBuilder(tmp_path / "run", nranks=2, clocks={1: Clock(0.5)})
    rb.add(SeriesSpec("oneway", 8, [1 * US]))
    rb.write()
    path = rb.run_dir / "raw/launch-0/rank-1.raw"
    raw = read_raw(path)
    blocks = [b for b in raw.blocks if b.meta["kind"] == "series"]
    bad = {"kind": "sync", "phase": "after", "residual_s": None,
           "model": {"offset_s": None, "drift": None, "ref_s": None}}
    write_raw(path, raw.header, blocks + [{"meta": bad}])
    table = ingest(rb.run_dir, {})
    assert np.isnan(_rows(table, rank=1)["t_start"].to_numpy()).all()
    assert not np.isnan(_rows(table, rank=0)["t_start"].to_numpy()).any()
    ctx = json.loads(table.schema.metadata[b"mpiscope.context"])
    assert ctx["clock"]["0"]["1"]["model"] is None and ctx["series"][0]["invalid"] == 1


def _same_samples(a, b):
    for name in ("values", "rep", "launch", "source_a", "source_b"):
        x, y = getattr(a, name), getattr(b, name)
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), name
    assert (a.n_invalid, a.rule) == (b.n_invalid, b.rule)


def test_derived_samples_are_those_of_the_table_for_series_of_one_launch(tmp_path):
    from mpiscope.store.run import Run
    from mpiscope.store.samples import table_context
    from mpiscope.store.series import all_series_samples

    rb = RunBuilder(tmp_path / "run", nranks=2, clocks={1: Clock(0.5)}, launches=(0, 1))
    rb.add(SeriesSpec("pingpong", 8, [1 * US, 3 * US, 2 * US], late=((1, 1),)))
    rb.add(SeriesSpec("allreduce", 64, [4 * US, 5 * US]))
    rb.add(SeriesSpec("oneway", 8, [1 * US, 2 * US], launches=(0, 1)))
    rb.write()
    derived = {}
    table = ingest(rb.run_dir, {}, derived)
    expected = {(b, a, s): smp for b, a, s, smp in
                all_series_samples(table, Run.from_context(table_context(table), rb.run_dir))}
    # A series of two launches is pooled by all_series_samples, so ingest hands out none.
    assert sorted(derived) == [("allreduce", "mpi", 64), ("pingpong", "mpi", 8)]
    for key, smp in derived.items():
        _same_samples(smp, expected[key])
    assert derived[("pingpong", "mpi", 8)].n_invalid > 0
