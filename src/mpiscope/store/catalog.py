# SPDX-License-Identifier: BSD-3-Clause
"""Catalog of the runs under an output root: OUT/catalog.duckdb.

The run directories (OUT/<run_id>/context.json) are the truth; the catalog
is an index over them, refreshed from the directories whenever it is read,
so it never disagrees with what is on disk for long. mpiscope processes take
turns on it (OUT/.catalog.lock); when another program holds it or the disk is
full, reads fall back to scanning the directories instead of failing, and a
damaged catalog is rebuilt from the directories.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import time
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.common.inputs import InputError, is_regular, open_regular_append, read_json
from mpiscope.store.checks import whole
from mpiscope.store.layout import CATALOG_FILE, CONTEXT_FILE, context_files

_COLUMNS = ("run_id", "created", "status", "mpi", "np", "benches", "path", "label")
_STORED = _COLUMNS + ("context",)  # a row as _row() makes it
_DDL = """
CREATE TABLE IF NOT EXISTS runs (
    run_id  VARCHAR PRIMARY KEY,
    created VARCHAR,
    status  VARCHAR,
    mpi     VARCHAR,
    np      INTEGER,
    benches VARCHAR,   -- JSON list
    path    VARCHAR,
    context VARCHAR    -- the whole context.json
);
-- a catalog without the label column gains it
ALTER TABLE runs ADD COLUMN IF NOT EXISTS label VARCHAR;
"""


class _Locked(Exception):
    """The catalog cannot be written now (held by another program, or the disk is
    full): readers scan the run directories instead."""


LOCK_FILE = ".catalog.lock"  # beside the catalog: one mpiscope process uses it at a time
LOCK_WAIT_S = 20.0


@contextlib.contextmanager
def _exclusive(out_root):
    """Holds OUT/.catalog.lock, so concurrent runs, listings and reports on one
    root take turns (DuckDB lets one process write a file at a time, and a
    refresh reads and writes in one transaction)."""
    try:  # never blocks: a FIFO or a device in the lock file's place is refused
        handle = open_regular_append(Path(out_root) / LOCK_FILE)
    except OSError:  # a root we may not write to, or no regular file there: read it by scanning
        raise _Locked from None
    with handle:
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise _Locked from None
                time.sleep(0.02)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _unavailable(exc):
    """A DuckDB error that says the file is busy or the disk full, not damaged."""
    text = str(exc)
    return "Could not set lock" in text or "No space left" in text or "Permission denied" in text


def _connect(path, retries=10, wait_s=0.05):
    import duckdb  # here, not at start-up: most commands never open the catalog

    for attempt in range(retries):
        try:
            con = duckdb.connect(str(path))
        except duckdb.IOException as exc:
            # Another program (not mpiscope, which takes the lock file) holds the
            # file; it is usually released quickly.
            if "Could not set lock" not in str(exc):
                raise
            if attempt == retries - 1:
                raise _Locked from None
            time.sleep(wait_s)
            continue
        try:
            con.execute(_DDL)
        except BaseException:
            con.close()
            raise
        return con


def _session(out_root, operation):
    """operation(connection) on OUT/catalog.duckdb, one process at a time. A
    damaged catalog (cut off, emptied, overwritten) is rebuilt from the run
    directories, which are the truth, and the user is told; the operation then
    runs on the new one. Raises _Locked when the catalog cannot be used now."""
    import duckdb

    path = Path(out_root) / CATALOG_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(path) and not is_regular(path):  # DuckDB would block on a FIFO
        sys.stderr.write(f"mpiscope: warning: the catalog {path} is not a regular file; the runs "
                         "are read from their directories (remove it to have it rebuilt)\n")
        raise _Locked
    with _exclusive(out_root):
        damage = None  # what the first attempt found wrong with the file
        for attempt in range(2):
            try:
                if attempt:
                    _rebuild(out_root, path, damage)
                con = _connect(path)
                try:
                    return operation(con)
                finally:
                    con.close()
            except duckdb.Error as exc:
                if _unavailable(exc):
                    raise _Locked from None
                if attempt:
                    sys.stderr.write(f"mpiscope: warning: the catalog {path} cannot be rebuilt "
                                     f"({_first_line(exc)}); the runs are read from their "
                                     "directories\n")
                    raise _Locked from None
                damage = exc


def _first_line(exc):
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _rebuild(out_root, path, exc):
    """A new catalog from the run directories in place of a damaged one."""
    why = _first_line(exc)
    for stale in (path, path.with_name(path.name + ".wal")):
        stale.unlink(missing_ok=True)
    rows = _scan(out_root)
    con = _connect(path)
    try:
        _refresh(con, rows)
    finally:
        con.close()
    sys.stderr.write(f"mpiscope: note: the catalog {path} could not be read ({why}); it was "
                     f"rebuilt from the {len(rows)} run directories under {out_root}\n")


def _row(run_dir, context):
    from mpiscope.store.run import Run  # here: `mpiscope runs` on an empty root never needs it

    run_dir = Path(run_dir).resolve()
    run = Run.from_context(context, run_dir)
    return (run.run_id, run.created, run.status, run.mpi,
            run.np if whole(run.np, 1, 2**31 - 1) else None,  # a damaged count is left blank
            json.dumps(list(run.benches)), str(run_dir), run.label, json.dumps(context))


def _upsert(con, rows):
    """Rows in, by run id: UPDATE the runs the catalog has, INSERT the others.
    (A DELETE then INSERT of one key in one transaction trips the primary key
    in DuckDB releases before 1.2.)"""
    if not rows:
        return
    known = {r[0] for r in con.execute("SELECT run_id FROM runs").fetchall()}
    rest = _STORED[1:]
    updates = [[*row[1:], row[0]] for row in rows if row[0] in known]
    inserts = [list(row) for row in rows if row[0] not in known]
    if updates:
        con.executemany(f"UPDATE runs SET {', '.join(f'{c} = ?' for c in rest)} WHERE run_id = ?",
                        updates)
    if inserts:
        marks = ", ".join("?" * len(_STORED))
        con.executemany(f"INSERT INTO runs ({', '.join(_STORED)}) VALUES ({marks})", inserts)


def record(out_root, run_dir, context: dict) -> None:
    """Add or update one run in the catalog."""
    try:
        _session(out_root, lambda con: _upsert(con, [_row(run_dir, context)]))
    except _Locked:
        return  # the next refresh picks the run up from its context.json


def _scan(out_root):
    """Rows for every OUT/<dir>/context.json that parses; of directories that
    claim one run id (a copied run), the one named after it, else the first."""
    rows = {}
    for cj in map(Path, context_files(out_root)):
        try:
            context = read_json(cj, what="the run context")
        except InputError:
            continue  # being written, or damaged (not JSON, not a file): not a usable run
        if isinstance(context, dict):
            context.setdefault("run_id", cj.parent.name)
            row = _row(cj.parent, context)
            if row[0] not in rows or cj.parent.name == row[0]:
                rows[row[0]] = row
    return list(rows.values())


def _refresh(con, rows):
    if con.execute("SELECT count(*) FROM runs").fetchone()[0] == len(rows) and \
            _unchanged(con, rows):
        return  # nothing to write: a listing of an unchanged root is a read
    con.execute("BEGIN TRANSACTION")
    known = con.execute("SELECT run_id, path FROM runs").fetchall()
    gone = [[rid] for rid, path in known if not (Path(path) / CONTEXT_FILE).exists()]
    if gone:
        con.executemany("DELETE FROM runs WHERE run_id = ?", gone)
    _upsert(con, rows)
    con.execute("COMMIT")


def _unchanged(con, rows):
    stored = {rid: (path, ctx) for rid, path, ctx in
              con.execute("SELECT run_id, path, context FROM runs").fetchall()}
    return all(stored.get(r[0]) == (r[6], r[-1]) for r in rows)


def refresh(out_root) -> None:
    """Make the catalog match the run directories: add new runs, update
    changed ones, drop runs whose directory vanished."""
    rows = _scan(out_root)
    try:
        _session(out_root, lambda con: _refresh(con, rows))
    except _Locked:
        return


def _sort_key(run):
    created = run.get("created") or ""
    try:
        from datetime import datetime  # only when there are runs to sort

        ts = datetime.fromisoformat(created).timestamp()
    except (TypeError, ValueError):
        ts = float("-inf")
    return (ts, created, run["run_id"])


def forget(out_root, run_dirs) -> None:
    """Drop the runs stored in `run_dirs` from the catalog (the directories
    are gone or going)."""
    if not run_dirs or not (Path(out_root) / CATALOG_FILE).exists():
        return
    paths = [[str(Path(d).resolve())] for d in run_dirs]
    try:
        _session(out_root, lambda con: con.executemany("DELETE FROM runs WHERE path = ?", paths))
    except _Locked:
        return  # the next refresh drops them: their directories are gone


def list_runs(out_root, with_context=False) -> list[dict]:
    """All runs under `out_root`, oldest first: run_id, created, status, mpi,
    np, benches, path, label (and `context`, the whole context.json, when asked)."""
    columns = _STORED if with_context else _COLUMNS
    if not Path(out_root).is_dir():
        return []
    scanned = _scan(out_root)
    if not scanned:  # nothing to list: no need to open (or create) the catalog
        return []
    def refreshed(con):
        _refresh(con, scanned)
        return con.execute(f"SELECT {', '.join(columns)} FROM runs").fetchall()

    try:
        rows = _session(out_root, refreshed)
    except _Locked:
        rows = [r[:len(columns)] for r in scanned]
    runs = []
    for r in rows:
        run = dict(zip(columns, r))
        run["benches"] = json.loads(run["benches"]) if run["benches"] else []
        if with_context:
            run["context"] = json.loads(run["context"])
        runs.append(run)
    return sorted(runs, key=_sort_key)


def is_run_dir(path):
    return path.is_dir() and ((path / CONTEXT_FILE).exists() or (path / "samples.parquet").exists())


def resolve(out_root, ref: str) -> Path:
    """The directory of the run `ref`: a run id, the label of one run
    (`mpiscope run --label`), a unique prefix of a run id, a path to a run
    directory, or "latest" (the newest run)."""
    ref = str(ref)
    if not ref.strip():  # it would be a prefix of every run id
        raise UsageError("an empty RUN names no run; give a run id, a unique prefix of one, a "
                         "label, a path to a run directory, or 'latest'")
    as_path = Path(ref)
    if ref != "latest" and as_path.is_dir() and not (as_path / CONTEXT_FILE).exists() and \
            any(as_path.glob("*.parquet")):
        raise UsageError(f"{as_path / CONTEXT_FILE} is missing: {as_path} holds a run's tables but not "
                         "its context; restore the file from a copy, or `mpiscope runs rm` the run")
    if is_run_dir(as_path) and (ref != "latest"):
        return as_path
    runs = list_runs(out_root)
    hint = f"`mpiscope runs --out {out_root}` lists the runs"
    if not runs:
        raise UsageError(
            f"no runs under {out_root}: run `mpiscope run` first, or point --out at the "
            "directory that holds your runs")
    if ref == "latest":
        return Path(runs[-1]["path"])
    exact = [r for r in runs if r["run_id"] == ref]
    if exact:
        return Path(exact[0]["path"])
    labelled = [r for r in runs if r.get("label") == ref]
    if len(labelled) > 1:
        raise UsageError(f"label '{ref}' names {len(labelled)} runs ("
                         f"{', '.join(r['run_id'] for r in labelled)}); give a run id")
    if labelled:
        return Path(labelled[0]["path"])
    matches = [r for r in runs if r["run_id"].startswith(ref)]
    if len(matches) == 1:
        return Path(matches[0]["path"])
    if matches:
        ids = ", ".join(r["run_id"] for r in matches[:10])
        more = f" and {len(matches) - 10} more" if len(matches) > 10 else ""
        raise UsageError(f"run '{ref}' is ambiguous: it matches {ids}{more}; "
                         "give more characters of the run id")
    raise UsageError(f"no run '{ref}' under {out_root} (no run id, prefix of one, or label); "
                     f"{hint}, or give a path to a run directory or 'latest'")
