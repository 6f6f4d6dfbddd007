# SPDX-License-Identifier: BSD-3-Clause
"""Method blocks (raw schema 3) through ingest: methods.parquet holds every
row with its global times, the context describes every method series, and
`mpiscope methods` derives the tools' numbers from them. Older runs, with no
method blocks, are read as before."""

import json
import math

import pyarrow.compute as pc
import pytest

from mpiscope.common.errors import UsageError
from mpiscope.methods.result import methods_of_run
from mpiscope.methods.stored import load_series
from mpiscope.store.ingest import ingest, load
from mpiscope.store.methods_table import METHODS_FILE, read_methods
from methods_data import encode_method_block, method_meta
from rawgen import Clock, RunBuilder, SeriesSpec, context_for

U = 1e-6
OFFSET = 3e-3  # rank 1's clock is ahead of rank 0's by 3 ms


def _run(tmp_path, with_methods=True, schema=3):
    rb = RunBuilder(tmp_path / "run", nranks=2, clocks={1: Clock(OFFSET)}, schema=schema)
    rb.add(SeriesSpec("allreduce", 8, [2 * U, 3 * U, 4 * U]))   # mpiscope's median: 3 µs
    rb.write()
    if with_methods:
        # OSU's allreduce: rank 0 takes 1, 2, 3 µs, rank 1 3, 3, 6 µs (its local clock ahead)
        spans = {0: [(1.0, 2.0), (11.5, 13.5), (20, 23)], 1: [(0.5, 3.5), (11, 14), (20, 26)]}
        warm = (0.0, 0.4, 1, 1, 0, 0)
        for rank, rows in spans.items():
            local = [warm] + [((s * U) + (OFFSET if rank else 0), (e * U) + (OFFSET if rank else 0), 0, 1, 0, 0)
                              for s, e in rows]
            ref = [(0.0, 2.5 * U + (OFFSET if rank else 0), 0, 1, 0, 0)]
            path = rb.run_dir / "raw" / "launch-0" / f"rank-{rank}.raw"
            with open(path, "ab") as f:
                f.write(encode_method_block(method_meta("osu", "allreduce", 8, rank, params={"skip": 1}), local))
                f.write(encode_method_block(method_meta("ref_barrier", "allreduce", 8, rank,
                                                        start="barrier_before"), ref))
    ctx = context_for(run_id="20240101-000000-abcd")
    (rb.run_dir / "context.json").write_text(json.dumps(ctx))
    ingest(rb.run_dir, ctx)
    return rb.run_dir


def test_ingest_writes_every_row_with_its_global_times(tmp_path):
    run_dir = _run(tmp_path)
    table = read_methods(run_dir)
    assert table.num_rows == 2 * (4 + 1)
    osu = table.filter(pc.equal(table["method"], "osu")).to_pydict()
    rank1 = [i for i, r in enumerate(osu["rank"]) if r == 1]
    for i in rank1:  # global = local - offset
        assert math.isclose(osu["t_start"][i], osu["t_start_local"][i] - OFFSET, abs_tol=1e-15)
    assert sorted(set(osu["phase"])) == [0, 1]
    _, run = load(run_dir)
    entries = {e["method"]: e for e in run.context["methods"]}
    assert entries["osu"]["params"] == {"skip": 1} and entries["osu"]["rows"] == {"0": 4, "1": 4}
    assert entries["ref_barrier"]["start"] == "barrier_before"


def test_methods_of_a_run_derive_the_number_and_its_terms(tmp_path):
    run_dir = _run(tmp_path)
    _, run = load(run_dir)
    assert [(s.method, s.size) for s in load_series(run_dir, run)] == [("osu", 8), ("ref_barrier", 8)]
    r = methods_of_run(run_dir)
    (row,) = r.rows
    assert (row.bench, row.size, row.unit) == ("allreduce", 8, "s")
    assert math.isclose(row.median, 3 * U, rel_tol=1e-6)  # the synthetic clocks round to ~1e-15 s
    (a,) = row.tools
    assert math.isclose(a.derivation.number, 3 * U, rel_tol=1e-9)   # rank means 2 and 4
    # 3 -> 2.5 (median) -> 3 (slowest) -> 2.5 (from the last start, on the global clock); the barrier
    # reference (2.5 on the global clock) -> mpiscope's 3; nothing left unexplained
    assert [(t.cause, round(t.value / U, 6)) for t in a.terms] == [
        ("statistic", 0.5), ("ranks", -0.5), ("barrier", 0.5), ("barrier", -0.5), ("unexplained", 0.0)]


def test_a_run_without_method_blocks_is_read_as_before(tmp_path):
    run_dir = _run(tmp_path, with_methods=False, schema=2)
    assert not (run_dir / METHODS_FILE).exists()
    _, run = load(run_dir)
    assert "methods" not in run.context and load_series(run_dir, run) == []
    with pytest.raises(UsageError, match="--methods"):
        methods_of_run(run_dir)
