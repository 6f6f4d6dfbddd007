# SPDX-License-Identifier: BSD-3-Clause
"""The listing of the runs kept beside the catalog (store/listing.py): it
lists exactly what the catalog lists, and a run added, changed or removed,
a moved root, a damaged or hostile file or a FIFO in its place lists the runs
from the catalog instead."""

import json
import os
import time

import pytest

from mpiscope.store import catalog, dir_stamps, listing
from catalog_runs import make_run, three_runs


def settle(out):
    """Every file under `out` as if written a minute ago: the catalog trusts
    the stamps of files that changed more than dir_stamps.RACY_S ago only."""
    then = time.time() - 60
    for dirpath, _, files in os.walk(out):
        for name in files:
            os.utime(os.path.join(dirpath, name), (then, then))


def truth(out):
    """The listing as the catalog gives it (DuckDB, the index not read)."""
    return [{k: v for k, v in r.items() if k != "context"} for r in catalog.list_runs(out, with_context=True)]


def stamps(out):
    return [s for _, s in dir_stamps.stamps(out)]


@pytest.fixture
def out(tmp_path):
    root = three_runs(tmp_path / "runs")
    settle(root)
    catalog.list_runs(root)  # writes the index
    return root


def test_the_index_lists_what_the_catalog_lists(out):
    assert (out / listing.INDEX_FILE).is_file()
    kept = listing.read(out, stamps(out))
    assert kept == listing.kept_runs(out) == truth(out) == catalog.list_runs(out)
    assert [r["run_id"] for r in kept] == ["20240301-090000-aaaa", "20240302-090000-bbbb", "20240302-100000-cccc"]


def test_a_run_added_after_the_index_is_listed(out):
    make_run(out, "20240303-090000-dddd", "2024-03-03T09:00:00+00:00")
    settle(out)
    assert listing.read(out, stamps(out)) is None and listing.kept_runs(out) is None
    runs = catalog.list_runs(out)
    assert runs[-1]["run_id"] == "20240303-090000-dddd" and runs == truth(out)
    assert listing.read(out, stamps(out)) == runs  # written again


def test_a_run_changed_after_the_index_is_listed_as_it_is(out):
    cj = out / "20240301-090000-aaaa" / "context.json"
    ctx = json.loads(cj.read_text())
    ctx["label"] = "relabelled"
    other = cj.with_name("context.json.new")
    other.write_text(json.dumps(ctx))
    os.replace(other, cj)
    settle(out)
    runs = catalog.list_runs(out)
    assert runs[0]["label"] == "relabelled" and runs == truth(out)


def test_a_removed_run_is_not_listed(out):
    os.rename(out / "20240302-090000-bbbb", out / ".gone")
    runs = catalog.list_runs(out)
    assert [r["run_id"] for r in runs] == ["20240301-090000-aaaa", "20240302-100000-cccc"]


def test_a_moved_root_lists_the_runs_where_they_are(out, tmp_path):
    moved = tmp_path / "moved"
    os.rename(out, moved)
    assert listing.read(moved, stamps(moved)) is None
    runs = catalog.list_runs(moved)
    assert all(r["path"].startswith(str(moved.resolve())) for r in runs)


def test_stamps_of_files_changed_just_now_are_not_kept(tmp_path):
    root = three_runs(tmp_path / "runs")  # not settled: their stamps match no later one
    runs = catalog.list_runs(root)
    assert len(runs) == 3 and not (root / listing.INDEX_FILE).exists()


def _mutations():
    def first(key, value):
        return lambda doc: doc["runs"][0].__setitem__(key, value)

    return {
        "np a string": first("np", "2"),
        "np true": first("np", True),
        "a bench not a string": first("benches", [1]),
        "a run without its path": lambda doc: doc["runs"][0].pop("path"),
        "a key too many": first("extra", 1),
        "a run id number": first("run_id", 7),
        "runs not a list": lambda doc: doc.__setitem__("runs", {}),
        "another root": lambda doc: doc.__setitem__("root", "/elsewhere"),
        "other stamps": lambda doc: doc["stamps"].pop(),
        "another version": lambda doc: doc.__setitem__("version", listing.VERSION + 1),
        "another mpiscope": lambda doc: doc.__setitem__("code", ["elsewhere"]),
    }


@pytest.mark.parametrize("what", sorted(_mutations()))
def test_an_index_of_the_wrong_shape_is_not_trusted(out, what):
    expected = truth(out)
    path = out / listing.INDEX_FILE
    doc = json.loads(path.read_text())
    _mutations()[what](doc)
    path.write_text(json.dumps(doc))
    assert listing.read(out, stamps(out)) is None
    assert catalog.list_runs(out) == expected
    assert listing.read(out, stamps(out)) == expected  # written again


@pytest.mark.parametrize(
    "text",
    [b"", b'{"format"', b"\x80", b"[" * 100_000, b'{"runs": Infinity}'],
    ids=["empty", "cut", "not UTF-8", "nested deep", "Infinity"],
)
def test_a_damaged_index_is_not_trusted(out, text):
    expected = truth(out)
    (out / listing.INDEX_FILE).write_bytes(text)
    assert listing.read(out, stamps(out)) is None
    assert catalog.list_runs(out) == expected


def test_a_fifo_in_its_place_is_neither_read_nor_written(tmp_path):
    root = three_runs(tmp_path / "runs")
    settle(root)
    os.mkfifo(root / listing.INDEX_FILE)
    assert catalog.list_runs(root) == truth(root)  # not waited on
    assert (root / listing.INDEX_FILE).is_fifo()
