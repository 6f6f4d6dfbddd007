# SPDX-License-Identifier: BSD-3-Clause
"""Method blocks (raw schema 3) through ingest: methods.parquet holds every
row with its global times, the context describes every method series, and
`mpiscope methods` derives the tools' numbers from them. Older runs, with no
method blocks, are read as before."""

import math

import pyarrow.compute as pc
import pytest

from mpiscope.common.errors import UsageError
from mpiscope.methods.result import methods_of_run
from mpiscope.methods.stored import load_series
from mpiscope.store.ingest import load
from mpiscope.store.methods_table import METHODS_FILE, read_methods
from methods_data import OFFSET, U, methods_run


def _run(tmp_path, with_methods=True, schema=3):
    return methods_run(tmp_path / "run", with_methods, schema)


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
