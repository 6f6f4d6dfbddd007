# SPDX-License-Identifier: BSD-3-Clause
"""The Python API: mpiscope.load_run(path) -> Run with .samples(), .summary(),
.context; mpiscope.runs(out). Checked against the known samples of
synthetic runs and against `show`."""

import json

import numpy as np
import pandas as pd
import pytest

import mpiscope
from mpiscope.common.errors import UsageError
from mpiscope.store.run import Run as StoredRun
from mpiscope.views.show import show_rows
from rawgen import DEMO_RUN_ID


def test_load_run_by_path_id_prefix_and_latest(demo):
    out, run_dir, _ = demo
    run = mpiscope.load_run(run_dir)
    assert isinstance(run, StoredRun) and isinstance(run, mpiscope.Run)
    assert run.run_id == DEMO_RUN_ID and run.np == 4 and run.path == run_dir
    assert run.context["run_id"] == DEMO_RUN_ID and run.context["series"]
    for ref in (DEMO_RUN_ID, DEMO_RUN_ID[:8], "latest"):
        assert mpiscope.load_run(ref, out=out).path == run_dir


def test_load_run_refuses_what_is_not_a_run(demo, tmp_path):
    out, _, _ = demo
    with pytest.raises(UsageError, match="is not a run directory"):
        mpiscope.load_run(tmp_path)
    with pytest.raises(UsageError, match="no run 'nope'"):
        mpiscope.load_run("nope", out=out)


def test_samples_are_every_sample_with_its_validity(demo):
    _, run_dir, rb = demo
    df = mpiscope.load_run(run_dir).samples()
    assert list(df.columns) == ["bench", "algo", "size", "launch", "rep", "rank", "peer", "value",
                                "unit", "valid"]
    expected = {(b, a, s): e for (b, a, s, _), e in rb.expected.items()}
    assert len(df) == sum(len(e.samples) for e in expected.values())
    for (bench, algo, size), e in expected.items():
        got = df[(df.bench == bench) & (df.algo == algo) & (df["size"] == size)]
        want = {}
        for (launch, rep, source), (value, ok) in e.samples.items():
            a, _, b = source.partition("->")
            want[(launch, rep, int(a), int(b) if b else None)] = (value, ok)
        have = {(int(r.launch), int(r.rep), int(r.rank), None if pd.isna(r.peer) else int(r.peer)):
                (r.value, bool(r.valid)) for r in got.itertuples()}
        assert have.keys() == want.keys(), (bench, size)
        for key, (value, ok) in want.items():
            assert have[key][1] == ok, (bench, size, key)
            assert have[key][0] == pytest.approx(value, rel=1e-6, abs=1e-12), (bench, size, key)
    assert set(df[df.bench == "bw"].unit) == {"B/s"} and set(df[df.bench == "pingpong"].unit) == {"s"}
    assert df[df.bench == "allreduce"].peer.isna().all()   # a collective: one rank, no peer


def test_samples_agree_with_show(demo):
    _, run_dir, _ = demo
    run = mpiscope.load_run(run_dir)
    valid = run.samples().query("valid")
    for row in show_rows(run_dir):
        v = valid[(valid.bench == row["bench"]) & (valid["size"] == row["size"])].value
        assert len(v) == row["n"]
        assert np.median(v) == pytest.approx(row["median"], rel=1e-12)


def test_samples_of_one_series_and_a_bad_selection(demo):
    _, run_dir, _ = demo
    run = mpiscope.load_run(run_dir)
    df = run.samples(bench="pingpong", size=8)
    assert set(df.bench) == {"pingpong"} and set(df["size"]) == {8} and len(df) == 5
    assert (~df.valid).sum() == 1
    with pytest.raises(UsageError, match="no series with bench=gather.*its benchmarks: pingpong, bw"):
        run.samples(bench="gather")


def test_summary_is_the_show_table(demo):
    _, run_dir, _ = demo
    summary = mpiscope.load_run(run_dir).summary()
    rows = show_rows(run_dir)
    assert len(summary) == len(rows)
    assert summary.to_dict("records")[0] == rows[0]
    assert summary.set_index(["bench", "size"]).loc[("pingpong", 8), "invalid"] == 1


def test_runs_lists_the_runs(demo, tmp_path):
    out, run_dir, _ = demo
    df = mpiscope.runs(out)
    assert list(df.columns) == ["run_id", "created", "status", "mpi", "np", "benches", "path"]
    assert df.run_id.tolist() == [DEMO_RUN_ID]
    assert "pingpong" in df.benches[0] and mpiscope.load_run(df.path[0]).run_id == DEMO_RUN_ID
    empty = mpiscope.runs(tmp_path / "none")
    assert len(empty) == 0 and list(empty.columns) == list(df.columns)


def test_a_run_that_stored_nothing(tmp_path):
    run_dir = tmp_path / "20240101-000000-dead"
    run_dir.mkdir()
    (run_dir / "context.json").write_text(json.dumps({"run_id": run_dir.name, "status": "failed"}))
    run = mpiscope.load_run(run_dir)
    assert run.status == "failed"
    assert len(run.samples()) == 0 and "value" in run.samples().columns
    assert len(run.summary()) == 0 and "median" in run.summary().columns
