# SPDX-License-Identifier: BSD-3-Clause
"""The listing of an output root's runs (catalog.list_runs) kept in
OUT/catalog-runs.json beside the catalog, so that `mpiscope runs` and the
lookup of a RUN read it without DuckDB.

It holds the runs as the catalog listed them, the stamps of their directories
(dir_stamps.stamps) and the resolved output root, and is used only while those
stamps are the directories' stamps now; anything else (a run added, changed or
removed, the root moved, a stamp too recent to trust, a file that is not this
module's JSON) lists the runs from the catalog and writes the file again."""

from __future__ import annotations

import os

from mpiscope.common.cache_files import code_stamp, read_json, write_json
from mpiscope.store.dir_stamps import stamps as dir_stamps

INDEX_FILE = "catalog-runs.json"
FORMAT = "mpiscope-runs-listing"
VERSION = 1
_TEXT = (str, type(None))
COLUMN_TYPES = {  # every key of a listed run, with the types its value may have
    "run_id": (str,),
    "created": _TEXT,
    "status": _TEXT,
    "mpi": _TEXT,
    "np": (int, type(None)),
    "benches": (list,),
    "path": (str,),
    "label": _TEXT,
}


def kept_runs(out_root) -> list[dict] | None:
    """The runs under `out_root` as catalog.list_runs lists them, from the
    kept listing alone (no catalog, no DuckDB), or None when it is not
    current."""
    found = dir_stamps(out_root)
    return read(out_root, [stamp for _, stamp in found]) if found else []


def read(out_root, stamps) -> list[dict] | None:
    """The runs listed in OUT/catalog-runs.json when it was written for
    exactly these `stamps` (dir_stamps.stamps' strings), else None."""
    doc = read_json(os.path.join(out_root, INDEX_FILE))
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
        return None
    if doc.get("stamps") != list(stamps) or doc.get("root") != _root(out_root) or doc.get("code") != code_stamp():
        return None
    runs = doc.get("runs")
    if not isinstance(runs, list) or not all(_run_ok(r) for r in runs):
        return None
    return runs


def write(out_root, stamps, runs) -> None:
    """Keeps `runs` (catalog.list_runs, without contexts) listed from the
    directories with these `stamps`; not when a stamp is one no later stamp
    equals (a file changed too recently)."""
    stamps = list(stamps)
    if any(part.startswith("new") for s in stamps for part in s.rsplit("|", 2)[1:]):
        return
    if not all(_run_ok(r) for r in runs):  # read() would refuse it
        return
    doc = {
        "format": FORMAT,
        "version": VERSION,
        "root": _root(out_root),
        "code": code_stamp(),
        "stamps": stamps,
        "runs": runs,
    }
    write_json(os.path.join(out_root, INDEX_FILE), doc)


def _root(out_root) -> str:
    return os.path.realpath(out_root)  # as Path.resolve, which the catalog's paths start with


def _run_ok(run) -> bool:
    if not isinstance(run, dict) or set(run) != set(COLUMN_TYPES):
        return False
    if any(isinstance(run[k], bool) or not isinstance(run[k], t) for k, t in COLUMN_TYPES.items()):
        return False
    return all(isinstance(b, str) for b in run["benches"])
