# SPDX-License-Identifier: BSD-3-Clause
"""`show` and `runs` as text (views/show.py, views/runs.py) of synthetic runs:
rows, snapshots, failed runs with and without samples, notes, and MPICH's
library string."""

import json

import pytest

from mpiscope.store import catalog

from mpiscope.store.run import Run
from mpiscope.store.series import open_run
from mpiscope.views import show as views
from mpiscope.views.runs import format_runs
from mpiscope.store.ingest import ingest
from rawgen import context_for
from snapshot import assert_snapshot


def test_show_rows(demo):
    _, run_dir, rb = demo
    rows = views.show_rows(run_dir)
    keys = [(r["bench"], r["size"]) for r in rows]
    # Run order, one row per bench × size.
    assert keys[:4] == [("pingpong", 0), ("pingpong", 8), ("pingpong", 4194304), ("bw", 8)]
    assert len(keys) == len(set(keys)) == len(rb.expected)
    by = {(r["bench"], r["size"]): r for r in rows}
    pp = by[("pingpong", 8)]
    assert (pp["n"], pp["invalid"], pp["unit"], pp["stop"]) == (4, 1, "s", "ci")
    assert pp["median"] == pytest.approx(0.22e-6, rel=1e-6)
    assert pp["min"] == pytest.approx(0.19e-6, rel=1e-6)
    assert by[("bw", 1048576)]["unit"] == "B/s"
    assert by[("bw", 1048576)]["median"] == pytest.approx(10.85e9, rel=1e-9)
    assert by[("ring", 8)]["stop"] == "reps_max"
    assert by[("multipair", 64)]["n"] == 8


def test_format_show_snapshot(demo):
    _, run_dir, _ = demo
    text = views.format_show(views.show_rows(run_dir), open_run(run_dir))
    assert_snapshot("show.txt", text)


def test_format_runs_snapshot(tmp_path):
    for i, (status, benches) in enumerate([("completed", ["pingpong", "bw"]),
                                           ("failed", []),
                                           ("completed", ["allreduce"])]):
        run = tmp_path / f"2024040{i + 1}-120000-00{i}f"
        run.mkdir()
        ctx = context_for(run_id=run.name, status=status, benches=benches,
                          created=f"2024-04-0{i + 1}T12:00:00+00:00", np=2 + 2 * i,
                          mpi="mpich" if i == 2 else "openmpi")
        if i == 0:
            ctx["label"] = "before upgrade"
        (run / "context.json").write_text(json.dumps(ctx))
    assert_snapshot("runs.txt", format_runs(catalog.list_runs(tmp_path)))
    assert format_runs([]) == "no runs\n"


def test_failed_run_without_samples(tmp_path):
    run = tmp_path / "20240101-000000-dead"
    run.mkdir()
    ctx = context_for(run_id=run.name, status="failed", error="mpirun: not enough slots")
    (run / "context.json").write_text(json.dumps(ctx))
    assert views.show_rows(run) == []
    text = views.format_show([], open_run(run))
    assert text.splitlines()[0].startswith("run 20240101-000000-dead  failed")
    assert "(no measurements: mpirun: not enough slots)" in text
    assert any("the run failed" in n for n in views.notes([], open_run(run)))


def test_failed_run_with_zero_rows(tmp_path):
    run = tmp_path / "r"
    run.mkdir()
    ctx = context_for(run_id="r", status="failed", error="engine crashed")
    (run / "context.json").write_text(json.dumps(ctx))
    ingest(run, ctx)
    assert views.show_rows(run) == []
    assert "engine crashed" in views.format_show([], open_run(run))


def test_notes(demo):
    """One line per kind of flag, not one per series."""
    _, run_dir, _ = demo
    notes = views.notes(views.show_rows(run_dir), open_run(run_dir))
    assert [n.split(":")[0] for n in notes] == ["12 of 13 series", "1 of 13 series", "2 of 13 series"]
    assert "fewer than 6 valid samples" in notes[0]
    assert "more than 25% of samples invalid (late starts) (bcast 8 B)" in notes[1]
    assert "(stopped by: reps_max 1, time_budget 1) (ring 8 B, allreduce 1K B)" in notes[2]


def test_describe_mpich_library_string():
    ctx = context_for(mpi="mpich", mpi_library="MPICH Version:\t4.0.2\nMPICH Release date: x")
    assert "mpich (MPICH Version: 4.0.2)" in views.describe(Run.from_context(ctx))
