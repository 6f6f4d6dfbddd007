# SPDX-License-Identifier: BSD-3-Clause
"""The run catalog (store/catalog.py): listing, lookups by id, prefix, label
and latest, refresh and forget, damaged and copied catalogs and runs."""

import json
import shutil

import pytest

from mpiscope.store import catalog
from mpiscope.common.errors import UsageError
from catalog_runs import make_run, stored_ids, three_runs
from rawgen import context_for


@pytest.fixture
def out(tmp_path):
    return three_runs(tmp_path / "runs")


def test_list_runs(out):
    runs = catalog.list_runs(out)
    assert [r["run_id"] for r in runs] == ["20240301-090000-aaaa", "20240302-090000-bbbb",
                                           "20240302-100000-cccc"]
    assert runs[1]["status"] == "failed"
    assert runs[2]["benches"] == ["allreduce", "bcast"]
    assert runs[0]["mpi"] == "openmpi" and runs[0]["np"] == 2
    assert runs[0]["path"] == str((out / "20240301-090000-aaaa").resolve())
    assert (out / "catalog.duckdb").exists()


def test_list_runs_without_out_dir(tmp_path):
    assert catalog.list_runs(tmp_path / "nothing") == []


def test_resolve_id_prefix_latest_path(out):
    assert catalog.resolve(out, "20240301-090000-aaaa").name == "20240301-090000-aaaa"
    assert catalog.resolve(out, "20240301").name == "20240301-090000-aaaa"
    assert catalog.resolve(out, "latest").name == "20240302-100000-cccc"
    assert catalog.resolve(out, str(out / "20240302-090000-bbbb")) == out / "20240302-090000-bbbb"


def test_resolve_ambiguous(out):
    with pytest.raises(UsageError, match="ambiguous") as exc:
        catalog.resolve(out, "20240302")
    assert "20240302-090000-bbbb" in str(exc.value) and "20240302-100000-cccc" in str(exc.value)


def test_resolve_unknown(out):
    with pytest.raises(UsageError, match="no run 'nope'") as exc:
        catalog.resolve(out, "nope")
    assert "mpiscope runs" in str(exc.value)


def test_resolve_with_no_runs(tmp_path):
    with pytest.raises(UsageError, match="no runs under"):
        catalog.resolve(tmp_path, "latest")


def test_refresh_adds_and_drops(out):
    assert len(catalog.list_runs(out)) == 3
    shutil.rmtree(out / "20240301-090000-aaaa")
    make_run(out, "20240303-090000-dddd", "2024-03-03T09:00:00+00:00")
    catalog.refresh(out)
    assert [r["run_id"] for r in catalog.list_runs(out)] == [
        "20240302-090000-bbbb", "20240302-100000-cccc", "20240303-090000-dddd"]
    assert catalog.resolve(out, "latest").name == "20240303-090000-dddd"


def test_record_updates_a_run(out):
    run = out / "20240302-090000-bbbb"
    ctx = json.loads((run / "context.json").read_text())
    ctx["status"] = "completed"
    (run / "context.json").write_text(json.dumps(ctx))
    catalog.record(out, run, ctx)
    assert {r["run_id"]: r["status"] for r in catalog.list_runs(out)}["20240302-090000-bbbb"] \
        == "completed"


def test_damaged_context_is_skipped(out):
    bad = out / "20240309-000000-zzzz"
    bad.mkdir()
    (bad / "context.json").write_text("{ half written")
    assert len(catalog.list_runs(out)) == 3


def test_run_still_being_written_is_not_listed(out):
    partial = out / ".20240310-000000-eeee.partial"
    partial.mkdir()
    (partial / "context.json").write_text(json.dumps(context_for(run_id="20240310-000000-eeee")))
    assert "20240310-000000-eeee" not in [r["run_id"] for r in catalog.list_runs(out)]


def test_resolve_by_label(out):
    run = out / "20240302-090000-bbbb"
    ctx = json.loads((run / "context.json").read_text())
    (run / "context.json").write_text(json.dumps({**ctx, "label": "20240303"}))
    assert {r["run_id"]: r["label"] for r in catalog.list_runs(out)} == {
        "20240301-090000-aaaa": None, "20240302-090000-bbbb": "20240303",
        "20240302-100000-cccc": None}
    # A label wins over a prefix of another run's id; an id wins over a label.
    assert catalog.resolve(out, "20240303").name == "20240302-090000-bbbb"
    make_run(out, "20240304-000000-dddd", "2024-03-04T00:00:00+00:00")
    ctx = json.loads((out / "20240304-000000-dddd" / "context.json").read_text())
    (out / "20240304-000000-dddd" / "context.json").write_text(
        json.dumps({**ctx, "label": "20240301-090000-aaaa"}))
    assert catalog.resolve(out, "20240301-090000-aaaa").name == "20240301-090000-aaaa"


def test_label_of_several_runs_is_refused(out):
    for run_id in ("20240301-090000-aaaa", "20240302-100000-cccc"):
        ctx = json.loads((out / run_id / "context.json").read_text())
        (out / run_id / "context.json").write_text(json.dumps({**ctx, "label": "base"}))
    with pytest.raises(UsageError, match="label 'base' names 2 runs") as exc:
        catalog.resolve(out, "base")
    assert "20240301-090000-aaaa" in str(exc.value) and "give a run id" in str(exc.value)


def test_catalog_without_a_label_column_gains_it(out):
    import duckdb

    con = duckdb.connect(str(out / "catalog.duckdb"))
    con.execute("CREATE TABLE runs (run_id VARCHAR PRIMARY KEY, created VARCHAR, status VARCHAR, "
                "mpi VARCHAR, np INTEGER, benches VARCHAR, path VARCHAR, context VARCHAR)")
    con.execute("INSERT INTO runs VALUES ('19990101-000000-gone', NULL, 'completed', 'openmpi', 2, "
                "'[]', '/nonexistent/run', '{}')")
    con.close()
    run = out / "20240301-090000-aaaa"
    ctx = json.loads((run / "context.json").read_text())
    (run / "context.json").write_text(json.dumps({**ctx, "label": "old"}))
    runs = catalog.list_runs(out)
    assert [r["run_id"] for r in runs][0] == "20240301-090000-aaaa" and runs[0]["label"] == "old"
    assert "19990101-000000-gone" not in [r["run_id"] for r in runs]


def test_forget_drops_rows(out):
    catalog.list_runs(out)
    catalog.forget(out, [out / "20240301-090000-aaaa"])
    import duckdb

    con = duckdb.connect(str(out / "catalog.duckdb"))
    ids = sorted(r[0] for r in con.execute("SELECT run_id FROM runs").fetchall())
    con.close()
    assert ids == ["20240302-090000-bbbb", "20240302-100000-cccc"]


# ---- faults: a damaged catalog, copied runs, many processes at once

@pytest.mark.parametrize("damage", ["cut", "empty", "random"])
def test_a_damaged_catalog_is_rebuilt_from_the_runs_saying_so(out, damage, capsys):
    import os

    catalog.list_runs(out)
    path = out / "catalog.duckdb"
    whole = path.read_bytes()
    path.write_bytes({"cut": whole[:5000], "empty": b"", "random": os.urandom(100_000)}[damage])
    ids = [r["run_id"] for r in catalog.list_runs(out)]
    assert ids == ["20240301-090000-aaaa", "20240302-090000-bbbb", "20240302-100000-cccc"]
    err = capsys.readouterr().err
    assert "could not be read" in err and "rebuilt from the 3 run directories" in err
    assert stored_ids(out) == ids  # rewritten, not only read around
    catalog.list_runs(out)
    assert capsys.readouterr().err == ""  # once


def test_recording_into_a_damaged_catalog_rebuilds_it(out, capsys):
    catalog.list_runs(out)
    (out / "catalog.duckdb").write_bytes(b"\0" * 4096)
    new = make_run(out, "20240303-090000-dddd", "2024-03-03T09:00:00+00:00")
    catalog.record(out, new, json.loads((new / "context.json").read_text()))
    assert "rebuilt" in capsys.readouterr().err
    assert "20240303-090000-dddd" in stored_ids(out) and len(stored_ids(out)) == 4


def test_a_copied_run_directory_is_listed_once(out):
    shutil.copytree(out / "20240301-090000-aaaa", out / "copy-of-aaaa")
    runs = catalog.list_runs(out)
    assert [r["run_id"] for r in runs].count("20240301-090000-aaaa") == 1
    assert runs[0]["path"].endswith("20240301-090000-aaaa")  # the one named after it


# ---- what `mpiscope history` reads: kept in the catalog, read again only when changed

def _aged(out):
    """Every file under `out` a minute old: past the catalog's racy-stamp window."""
    import os
    import time

    for path in out.rglob("*"):
        os.utime(path, (time.time() - 60, time.time() - 60))


def _history_medians(out):
    return {r["run_id"]: [m[4] for m in r["medians"]] for r in catalog.history_runs(out)}


def test_history_reads_unchanged_runs_from_the_catalog_alone(tmp_path, monkeypatch):
    from history_runs import write_series

    out = tmp_path / "runs"
    ids = write_series(out, [20e-6, 21e-6, 22e-6])
    _aged(out)
    first = _history_medians(out)
    assert first == {rid: [m] for rid, m in zip(ids, [20e-6, 21e-6, 22e-6])}
    assert catalog.history_runs(out)[0]["context"]["env"]["SLURM_CLUSTER_NAME"] == "alpine"

    def no_reading(*args, **kwargs):
        raise AssertionError("a run directory was read again")

    monkeypatch.setattr(catalog, "read_json", no_reading)
    assert _history_medians(out) == first


def test_a_changed_quality_json_is_read_again(tmp_path):
    from history_runs import write_night, write_series

    out = tmp_path / "runs"
    ids = write_series(out, [20e-6, 21e-6])
    _aged(out)
    _history_medians(out)
    shutil.rmtree(out / ids[1])
    write_night(out, 1, {("allreduce", 65536): 30e-6})   # the same run id, other medians
    _aged(out)
    assert _history_medians(out) == {ids[0]: [20e-6], ids[1]: [30e-6]}


def test_a_catalog_without_the_history_columns_is_upgraded(tmp_path):
    import duckdb
    from history_runs import write_series

    out = tmp_path / "runs"
    ids = write_series(out, [20e-6, 21e-6])
    con = duckdb.connect(str(out / "catalog.duckdb"))
    con.execute("CREATE TABLE runs (run_id VARCHAR PRIMARY KEY, created VARCHAR, status VARCHAR, "
                "mpi VARCHAR, np INTEGER, benches VARCHAR, path VARCHAR, context VARCHAR, "
                "label VARCHAR)")
    for rid in ids:
        con.execute("INSERT INTO runs VALUES (?, NULL, 'completed', 'openmpi', 32, '[]', ?, '{}', NULL)",
                    [rid, str((out / rid).resolve())])
    con.close()
    assert _history_medians(out) == {ids[0]: [20e-6], ids[1]: [21e-6]}
    con = duckdb.connect(str(out / "catalog.duckdb"))
    assert con.execute("SELECT count(*) FROM runs WHERE stamp IS NOT NULL AND medians IS NOT NULL"
                       ).fetchone()[0] == 2
    con.close()


def test_history_reads_the_directories_when_the_catalog_is_not_a_file(tmp_path, capsys):
    import os

    from history_runs import write_series

    out = tmp_path / "runs"
    ids = write_series(out, [20e-6, 21e-6])
    os.mkfifo(out / "catalog.duckdb")
    assert _history_medians(out) == {ids[0]: [20e-6], ids[1]: [21e-6]}
    assert "not a regular file" in capsys.readouterr().err


def test_many_runs_changed_at_once_are_added_and_updated_as_one_table(tmp_path):
    out = tmp_path / "runs"
    count = catalog.FEW_ROWS * 2   # more than go in one by one
    for i in range(count):
        make_run(out, f"20240401-0000{i:02d}-eeee", f"2024-04-01T00:00:{i:02d}+00:00")
    assert [r["status"] for r in catalog.list_runs(out)] == ["completed"] * count
    for i in range(0, count, 2):   # half of them change
        path = out / f"20240401-0000{i:02d}-eeee" / "context.json"
        ctx = json.loads(path.read_text())
        path.write_text(json.dumps({**ctx, "status": "failed", "label": f"night {i}"}))
    runs = catalog.list_runs(out)
    assert [r["status"] for r in runs] == ["failed", "completed"] * (count // 2)
    assert [r["label"] for r in runs[:3]] == ["night 0", None, "night 2"]
    assert stored_ids(out) == sorted(r["run_id"] for r in runs)
