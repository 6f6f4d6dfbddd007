# SPDX-License-Identifier: BSD-3-Clause
"""Catalog of the runs under an output root: OUT/catalog.duckdb.

The run directories (OUT/<run_id>/context.json) are the truth; the catalog is an
index over them, refreshed whenever it is read: only the directories whose
context.json or quality.json changed (name, size, modification time, inode) are
read again, and go in as one Arrow table. Each row also holds what `mpiscope
history` reads (history_fields.py), so history is one query. mpiscope processes
take turns on it (OUT/.catalog.lock); when another program holds it or the disk
is full, reads scan the directories instead, and a damaged catalog is rebuilt.
The listing kept beside it (store/listing.py) is read without DuckDB."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
import time
from pathlib import Path

from mpiscope.common.inputs import InputError, is_regular, open_regular_append, read_json
from mpiscope.store.checks import whole
from mpiscope.store import run_refs
from mpiscope.store.dir_stamps import RACY_S, stamps as _stamps  # noqa: F401 - RACY_S read from here
from mpiscope.store.layout import CATALOG_FILE

_COLUMNS = ("run_id", "created", "status", "mpi", "np", "benches", "path", "label")
_STORED = _COLUMNS + ("context", "stamp", "series_context", "medians")  # a row as _row() makes it
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
-- a catalog without these columns gains them (empty stamps: read again once)
ALTER TABLE runs ADD COLUMN IF NOT EXISTS label VARCHAR;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS stamp VARCHAR;  -- of the files the row was read from
-- what `mpiscope history` reads (history_fields.py), JSON
ALTER TABLE runs ADD COLUMN IF NOT EXISTS series_context VARCHAR;
ALTER TABLE runs ADD COLUMN IF NOT EXISTS medians VARCHAR;
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
        sys.stderr.write(
            f"mpiscope: warning: the catalog {path} is not a regular file; the runs "
            "are read from their directories (remove it to have it rebuilt)\n"
        )
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
                    sys.stderr.write(
                        f"mpiscope: warning: the catalog {path} cannot be rebuilt "
                        f"({_first_line(exc)}); the runs are read from their "
                        "directories\n"
                    )
                    raise _Locked from None
                damage = exc


def _first_line(exc):
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _rebuild(out_root, path, exc):
    """A new catalog from the run directories in place of a damaged one."""
    why = _first_line(exc)
    for stale in (path, path.with_name(path.name + ".wal")):
        stale.unlink(missing_ok=True)
    rows = _scan(out_root)[0]
    con = _connect(path)
    try:
        _upsert(con, rows)
    finally:
        con.close()
    sys.stderr.write(
        f"mpiscope: note: the catalog {path} could not be read ({why}); it was "
        f"rebuilt from the {len(rows)} run directories under {out_root}\n"
    )


def _row(run_dir: Path, context, stamp=None):
    """A row of the runs table of the run in `run_dir` (a resolved path);
    `stamp` None: read again at the next refresh."""
    from mpiscope.store.history_fields import summary
    from mpiscope.store.run import Run  # here: `mpiscope runs` on an empty root never needs it

    run = Run.from_context(context, run_dir)
    return (
        run.run_id,
        run.created,
        run.status,
        run.mpi,
        run.np if whole(run.np, 1, 2**31 - 1) else None,  # a damaged count is left blank
        json.dumps(list(run.benches)),
        str(run_dir),
        run.label,
        json.dumps(context),
        stamp,
        *summary(run_dir, context),
    )


FEW_ROWS = 16  # fewer rows go in one by one (no Arrow import): one run recorded after it ran


def _upsert(con, rows):
    """Rows in, by run id: UPDATE the runs the catalog has, INSERT the others.
    (A DELETE then INSERT of one key in one transaction trips the primary key
    in DuckDB releases before 1.2.) Many rows go in as one Arrow table:
    DuckDB takes a row at a time from executemany, some milliseconds each."""
    if not rows:
        return
    if len(rows) > FEW_ROWS:
        _upsert_table(con, rows)
        return
    known = {r[0] for r in con.execute("SELECT run_id FROM runs").fetchall()}
    rest = _STORED[1:]
    updates = [[*row[1:], row[0]] for row in rows if row[0] in known]
    inserts = [list(row) for row in rows if row[0] not in known]
    if updates:
        con.executemany(f"UPDATE runs SET {', '.join(f'{c} = ?' for c in rest)} WHERE run_id = ?", updates)
    if inserts:
        marks = ", ".join("?" * len(_STORED))
        con.executemany(f"INSERT INTO runs ({', '.join(_STORED)}) VALUES ({marks})", inserts)


def _upsert_table(con, rows):
    import pyarrow as pa  # here: a listing of an unchanged root never needs it

    types = {"np": pa.int32()}
    table = pa.table({c: pa.array([r[i] for r in rows], types.get(c, pa.string())) for i, c in enumerate(_STORED)})
    con.register("incoming", table)
    try:
        con.execute(
            f"UPDATE runs SET {', '.join(f'{c} = incoming.{c}' for c in _STORED[1:])} "
            "FROM incoming WHERE runs.run_id = incoming.run_id"
        )
        con.execute(
            f"INSERT INTO runs ({', '.join(_STORED)}) SELECT {', '.join(_STORED)} FROM incoming "
            "WHERE run_id NOT IN (SELECT run_id FROM runs)"
        )
    finally:
        con.unregister("incoming")


def record(out_root, run_dir, context: dict) -> None:
    """Add or update one run in the catalog (with no stamp: the next refresh
    reads its files once more, in case they were written after `context`)."""
    try:
        _session(out_root, lambda con: _upsert(con, [_row(Path(run_dir).resolve(), context)]))
    except _Locked:
        return  # the next refresh picks the run up from its context.json


def _scan(out_root, kept=None, found=None):
    """(rows, kept ids): rows for every OUT/<dir>/context.json that parses and
    whose stamp is not in `kept` ({stamp: run id} of rows the catalog holds),
    and the run ids of the directories found unchanged. Of directories that
    claim one run id (a copied run), the one named after it, else the first.
    `found`: _stamps(out_root), when the caller has it."""
    kept = kept or {}
    rows, unchanged, todo = {}, {}, []  # run id -> row; run id -> directory name
    for cj, stamp in _stamps(out_root) if found is None else found:
        name = stamp.partition("|")[0]
        if stamp in kept:
            unchanged[kept[stamp]] = name
        else:
            todo.append((name, cj, stamp))
    root = Path(out_root).resolve()
    if len(todo) > FEW_ROWS:  # many files to read: their reads overlap, the parsing takes turns
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(READERS) as pool:
            read = list(pool.map(lambda item: _read_row(root, *item), todo))
    else:
        read = [_read_row(root, *item) for item in todo]
    for (name, _, _), row in zip(todo, read):
        if row is not None and (row[0] not in rows or name == row[0]):
            rows[row[0]] = row
    for rid in [rid for rid in rows if rid in unchanged]:  # a copy of a run the catalog holds
        if unchanged[rid] != rid and Path(rows[rid][6]).name == rid:
            del unchanged[rid]
        else:
            del rows[rid]
    return list(rows.values()), set(unchanged)


READERS = 8  # threads reading run directories at once


def _read_row(root: Path, name, cj, stamp):
    """The row of OUT/<name>, or None when its context.json is being written
    or damaged (not JSON, not a file, not an object): not a usable run."""
    try:
        context = read_json(cj, what="the run context")
    except InputError:
        return None
    if not isinstance(context, dict):
        return None
    context.setdefault("run_id", name)
    return _row(root / name, context, stamp)


def _refresh(con, out_root, found=None):
    """Reads again the run directories whose stamp changed, adds new runs and
    drops the runs whose directory vanished; writes nothing when nothing changed."""
    root = str(Path(out_root).resolve())  # a moved root: every run is read again, at its new path
    held = con.execute("SELECT stamp, run_id, path FROM runs WHERE stamp IS NOT NULL").fetchall()
    kept = {stamp: rid for stamp, rid, path in held if os.path.dirname(path) == root}
    rows, unchanged = _scan(out_root, kept, found)
    fresh = {r[0] for r in rows}
    gone = [
        [rid]
        for (rid,) in con.execute("SELECT run_id FROM runs").fetchall()
        if rid not in unchanged and rid not in fresh
    ]
    if not rows and not gone:
        return  # a listing of an unchanged root is a read
    con.execute("BEGIN TRANSACTION")
    if gone:
        con.executemany("DELETE FROM runs WHERE run_id = ?", gone)
    _upsert(con, rows)
    con.execute("COMMIT")


def refresh(out_root) -> None:
    """Make the catalog match the run directories: add new runs, update
    changed ones, drop runs whose directory vanished."""
    try:
        _session(out_root, lambda con: _refresh(con, out_root))
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


def _select(out_root, columns, found):
    """Rows of `columns` of every run, the catalog refreshed first; from a
    scan of the directories when the catalog cannot be used. `found`:
    _stamps(out_root)."""

    def refreshed(con):
        _refresh(con, out_root, found)
        return con.execute(f"SELECT {', '.join(columns)} FROM runs").fetchall()

    try:
        return _session(out_root, refreshed)
    except _Locked:
        index = [_STORED.index(c) for c in columns]
        return [tuple(r[i] for i in index) for r in _scan(out_root, found=found)[0]]


def list_runs(out_root, with_context=False) -> list[dict]:
    """All runs under `out_root`, oldest first: run_id, created, status, mpi,
    np, benches, path, label (and `context`, the whole context.json, when asked)."""
    from mpiscope.store import listing

    found = _stamps(out_root)
    if not found:
        return []  # nothing to list: no need to open (or create) the catalog
    stamps = [stamp for _, stamp in found]
    if not with_context:
        kept = listing.read(out_root, stamps)  # no DuckDB when no run changed since the last listing
        if kept is not None:
            return kept
    columns = _COLUMNS + ("context",) if with_context else _COLUMNS
    runs = []
    for r in _select(out_root, columns, found):
        run = dict(zip(columns, r))
        run["benches"] = json.loads(run["benches"]) if run["benches"] else []
        if with_context:
            run["context"] = json.loads(run["context"])
        runs.append(run)
    runs.sort(key=_sort_key)
    if not with_context:
        listing.write(out_root, stamps, runs)
    return runs


def history_runs(out_root) -> list[dict]:
    """The completed runs under `out_root`, in no order, as history reads them: run_id,
    created, label, path, `context` (the fields history reads, one dict shared
    by the runs that stored the same: not to be changed) and `medians`
    (history_fields.py; None: to be computed from the run's samples)."""
    found = _stamps(out_root)
    if not found:
        return []
    try:
        rows, contexts = _session(out_root, lambda con: _history_rows(con, out_root, found))
    except _Locked:
        columns = ("run_id", "created", "status", "label", "path", "series_context", "medians")
        index = [_STORED.index(c) for c in columns]
        scanned = [tuple(r[i] for i in index) for r in _scan(out_root, found=found)[0]]
        rows = [(r[0], r[1], r[3], r[4], r[5], r[6]) for r in scanned if r[2] == "completed" and r[5] is not None]
        contexts = {r[4]: r[4] for r in rows}
    try:
        medians = json.loads(f"[{','.join(r[5] or 'null' for r in rows)}]")  # one parse for all
    except ValueError:  # a row altered by hand: that run's medians come from its samples
        medians = [_json_or_none(r[5]) for r in rows]
    parsed = {key: _json_or_none(text) for key, text in contexts.items()}
    return [
        {"run_id": r[0], "created": r[1], "label": r[2], "path": r[3], "context": parsed[r[4]], "medians": m}
        for r, m in zip(rows, medians)
        if isinstance(parsed[r[4]], dict)
    ]  # else altered by hand: rewritten when its files change


def _history_rows(con, out_root, found):
    """(rows, {key: series context}): the completed runs' run_id, created,
    label, path, the key of their series context and their medians; each
    distinct series context once (runs of one series share it)."""
    _refresh(con, out_root, found)
    done = "status = 'completed' AND series_context IS NOT NULL"
    rows = con.execute(
        f"SELECT run_id, created, label, path, hash(series_context), medians FROM runs WHERE {done}"
    ).fetchall()
    contexts = dict(
        con.execute(f"SELECT DISTINCT hash(series_context), series_context FROM runs WHERE {done}").fetchall()
    )
    return rows, contexts


def _json_or_none(text):
    try:
        return json.loads(text) if text else None
    except ValueError:
        return None


def is_run_dir(path) -> bool:
    return run_refs.is_run_dir(path)


def resolve(out_root, ref: str) -> Path:
    """The directory of the run `ref` (run_refs.resolve_dir)."""
    return Path(run_refs.resolve_dir(out_root, ref))
