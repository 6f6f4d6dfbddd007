# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope show` and `mpiscope runs` print the same bytes whether they read
what is kept to start faster (RUN/show.json, OUT/catalog-runs.json) or the run
itself, and whatever holds those names (damaged text, a FIFO) changes nothing.
No MPI is started."""

import json
import os
import time

import pytest

from mpiscope.store import listing
from mpiscope.views import show_cache
from rawgen import build_demo_run
from runcli import mpiscope

COMMANDS = (("show",), ("show", "--json"), ("show", "20240315"), ("runs",))


def printed(out):
    """stdout, stderr and exit status of every command."""
    return [(p.stdout, p.stderr, p.returncode) for p in (mpiscope(*c, out=out) for c in COMMANDS)]


@pytest.fixture
def out(tmp_path):
    root = tmp_path / "runs"
    run_dir = build_demo_run(root)[0]
    then = time.time() - 60  # the listing keeps only stamps of files older than dir_stamps.RACY_S
    os.utime(run_dir / "context.json", (then, then))
    return root


def test_what_is_kept_prints_what_the_run_gives(out):
    run_dir = out / "20240315-101500-a1b2"
    from_the_run = printed(out)
    assert from_the_run[0][2] == 0 and "pingpong" in from_the_run[0][0]
    show_cache.keep(run_dir, show_cache.computed(run_dir).rows)  # as `mpiscope run` does
    assert (run_dir / show_cache.CACHE_FILE).is_file() and (out / listing.INDEX_FILE).is_file()
    assert printed(out) == from_the_run
    for damage in (b"{", json.dumps({"format": show_cache.FORMAT, "rows": "x"}).encode()):
        (run_dir / show_cache.CACHE_FILE).write_bytes(damage)
        (out / listing.INDEX_FILE).write_bytes(damage)
        assert printed(out) == from_the_run


def test_fifos_in_their_places_are_neither_read_nor_replaced(out):
    run_dir = out / "20240315-101500-a1b2"
    from_the_run = printed(out)
    for path in (run_dir / show_cache.CACHE_FILE, out / listing.INDEX_FILE):
        path.unlink(missing_ok=True)
        os.mkfifo(path)
    assert printed(out) == from_the_run  # no command waits on a FIFO
    assert (run_dir / show_cache.CACHE_FILE).is_fifo() and (out / listing.INDEX_FILE).is_fifo()
