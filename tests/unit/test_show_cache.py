# SPDX-License-Identifier: BSD-3-Clause
"""The rows `mpiscope show` prints, kept in RUN/show.json (views/show_cache.py):
read back they print exactly what the samples give, and anything in doubt (a
run changed after caching, a damaged or hostile file, a FIFO in its place) is
computed again from the samples."""

import json
import os

import pytest

from mpiscope.common.errors import UsageError
from mpiscope.store.series import open_run
from mpiscope.views import show, show_cache, show_text
from rawgen import build_demo_run


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(show_cache, "RACY_S", 0.0)  # the files count as settled at once
    return build_demo_run(tmp_path / "runs")[0]


def printed(kept, run_dir):
    """Everything show prints from `kept`: the table, the JSON, the warnings."""
    document = show_text.show_document(kept.run_id, run_dir, kept.context, kept.rows, kept.summary)
    return kept.text, document, kept.notes


def expected(run_dir):
    """Everything show prints of the run, computed from its samples."""
    run, rows = open_run(run_dir), show.show_rows(run_dir)
    return show.format_show(rows, run), show.show_json(rows, run), show.notes(rows, run)


def test_cached_rows_print_what_the_samples_give(run_dir):
    fresh = show_cache.shown(run_dir)
    assert (run_dir / show_cache.CACHE_FILE).is_file()
    kept = show_cache.cached(run_dir)
    assert kept is not None
    assert printed(kept, run_dir) == printed(fresh, run_dir) == expected(run_dir)
    assert "pingpong" in kept.text and len(kept.rows) == 13 and kept.notes


def test_a_run_stored_without_samples_is_cached_as_well(run_dir):
    (run_dir / "samples.parquet").unlink()
    fresh = show_cache.shown(run_dir)
    assert fresh.rows == [] and printed(show_cache.cached(run_dir), run_dir) == expected(run_dir)


def test_the_writer_of_the_files_caches_them_however_recent(run_dir, monkeypatch):
    monkeypatch.setattr(show_cache, "RACY_S", 1e9)  # every file changed "just now"
    show_cache.shown(run_dir)
    assert not (run_dir / show_cache.CACHE_FILE).exists()  # show may not trust such stamps
    show_cache.keep(run_dir, show.show_rows(run_dir))  # as `mpiscope run` does once it stored them
    assert printed(show_cache.cached(run_dir), run_dir) == expected(run_dir)


@pytest.mark.parametrize("change", ["rewrite context.json", "rewrite samples.parquet", "add quality.json"])
def test_a_run_changed_after_caching_is_computed_again(run_dir, change):
    show_cache.shown(run_dir)
    name = change.split()[-1]
    path = run_dir / name
    if change.startswith("add"):
        path.write_text("{}")
    else:
        other = path.with_name(name + ".new")
        other.write_bytes(path.read_bytes())
        os.replace(other, path)  # the same bytes, another file
    assert show_cache.cached(run_dir) is None
    assert printed(show_cache.shown(run_dir), run_dir) == expected(run_dir)


def test_samples_damaged_after_caching_are_reported_not_shown_from_the_cache(run_dir):
    show_cache.shown(run_dir)
    with open(run_dir / "samples.parquet", "r+b") as f:
        f.truncate(100)
    assert show_cache.cached(run_dir) is None
    with pytest.raises(UsageError, match="samples.parquet"):
        show_cache.shown(run_dir)


def _mutations():
    def row(key, value):
        return lambda doc: doc["rows"][0].__setitem__(key, value)

    return {
        "a string for a number": row("median", "1e-6"),
        "true for a count": row("n", True),
        "a row without its median": lambda doc: doc["rows"][0].pop("median"),
        "a row with a key too many": row("extra", 1),
        "flags not strings": lambda doc: doc["rows"][0]["quality"].__setitem__("flags", [1]),
        "rows not a list": lambda doc: doc.__setitem__("rows", {"0": doc["rows"][0]}),
        "warnings not strings": lambda doc: doc["summary"].__setitem__("warnings", [None]),
        "another version": lambda doc: doc.__setitem__("version", show_cache.VERSION + 1),
        "another format": lambda doc: doc.__setitem__("format", "x"),
        "other stamps": lambda doc: doc["sources"][show_cache.SAMPLES_FILE].__setitem__(0, 1),
        "stamps of another mpiscope": lambda doc: doc["sources"].__setitem__("mpiscope", ["elsewhere"]),
        "no context": lambda doc: doc.pop("context"),
        "a text not a string": lambda doc: doc.__setitem__("text", ["run"]),
        "a warning not a string": lambda doc: doc.__setitem__("notes", [1]),
        "another run id": lambda doc: doc.__setitem__("run_id", "x"),
        "a key too many": lambda doc: doc.__setitem__("extra", 1),
    }


@pytest.mark.parametrize("what", sorted(_mutations()))
def test_a_cache_of_the_wrong_shape_is_not_trusted(run_dir, what):
    computed = expected(run_dir)
    show_cache.shown(run_dir)
    path = run_dir / show_cache.CACHE_FILE
    doc = json.loads(path.read_text())
    _mutations()[what](doc)
    path.write_text(json.dumps(doc))
    assert show_cache.cached(run_dir) is None
    assert printed(show_cache.shown(run_dir), run_dir) == computed


@pytest.mark.parametrize(
    "text",
    [b"", b"{", b"\xff\xfe", b"[" * 100_000, b"null", b'{"rows": NaN}'],
    ids=["empty", "cut", "not UTF-8", "nested deep", "null", "NaN"],
)
def test_a_damaged_cache_is_not_trusted(run_dir, text):
    computed = expected(run_dir)
    show_cache.shown(run_dir)
    (run_dir / show_cache.CACHE_FILE).write_bytes(text)
    assert show_cache.cached(run_dir) is None
    assert printed(show_cache.shown(run_dir), run_dir) == computed


def test_infinite_numbers_are_not_trusted(run_dir):
    show_cache.shown(run_dir)
    path = run_dir / show_cache.CACHE_FILE
    text = path.read_text()
    doc = json.loads(text)
    median = doc["rows"][0]["median"]
    path.write_text(text.replace(f'"median":{json.dumps(median)}', '"median":1e999', 1))
    assert '"median":1e999' in path.read_text()
    assert show_cache.cached(run_dir) is None


def test_a_fifo_in_its_place_is_neither_read_nor_written(run_dir):
    fifo = run_dir / show_cache.CACHE_FILE
    os.mkfifo(fifo)
    assert show_cache.cached(run_dir) is None  # not waited on
    assert printed(show_cache.shown(run_dir), run_dir) == expected(run_dir)
    assert fifo.is_fifo()


def test_a_run_named_by_its_directory_alone_is_not_kept(run_dir):
    (run_dir / "samples.parquet").unlink()
    context = json.loads((run_dir / "context.json").read_text())
    del context["run_id"]  # its id is the directory's name, which a rename changes without a stamp
    (run_dir / "context.json").write_text(json.dumps(context))
    assert printed(show_cache.shown(run_dir), run_dir) == expected(run_dir)
    assert not (run_dir / show_cache.CACHE_FILE).exists()
