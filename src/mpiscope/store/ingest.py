# SPDX-License-Identifier: BSD-3-Clause
"""Raw per-rank files -> one Parquet table per run (samples.parquet).

One row per rank × repetition, with the local timestamps as recorded and the
same timestamps on the global clock (rank 0's timer), so every number
derived later can be traced back to the row that produced it. Run-level
facts (series, clock models, hosts) go into the file's metadata.
"""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from mpiscope.store import checks
from mpiscope.store.layout import SCHEMA_VERSION, rebuild_hint
from mpiscope.common.arrow_pandas import skip_pandas_probe
from mpiscope.common.atomic import atomic_path
from mpiscope.common.errors import UsageError
from mpiscope.store.rawfile import read_raw
from mpiscope.store.recovery import recovery_error
from mpiscope.store.run import Run
from mpiscope.store.samples import COLUMNS, DEFAULT_WINDOW_MSGS, Coded, derive, rule_of
from mpiscope.store.rep_key import REP_KEY_FIELDS
from mpiscope.store.trace import write_trace
from mpiscope.store.methods_table import entries as method_entries, write_methods
from mpiscope.common.inputs import InputError, parquet_metadata, read_json, read_parquet

skip_pandas_probe()  # before the first conversion: ingest and load never need pandas

SAMPLES_FILE = "samples.parquet"
TIME_COLUMNS = ("t_start_local", "t_end_local", "t_start", "t_end", "t_sched")
META_VERSION = b"mpiscope.schema_version"
META_CONTEXT = b"mpiscope.context"

SCHEMA = pa.schema(
    REP_KEY_FIELDS
    + [
        ("role", pa.string()),
        ("peer", pa.int32()),
        ("t_start_local", pa.float64()),
        ("t_end_local", pa.float64()),
        ("t_sched_local", pa.float64()),
        ("t_start", pa.float64()),
        ("t_end", pa.float64()),
        ("t_sched", pa.float64()),
        ("valid", pa.bool_()),
    ]
)

_NUMPY = {pa.int64(): np.int64, pa.int32(): np.int32, pa.float64(): np.float64, pa.bool_(): np.bool_}

_DICT_COLUMNS = ("bench", "algo", "size", "launch", "rank", "role", "peer")
_CODED = ("bench", "algo", "role")  # the string columns, as (codes, names) until written
_NO_ROWS = {f.name: (np.empty(0, np.int32), []) if f.name in _CODED else np.empty(0, _NUMPY[f.type]) for f in SCHEMA}
# Timestamps stored byte by byte (byte-stream split): their sign, exponent and
# leading mantissa bytes repeat, which LZ4 then finds: a smaller file, written
# faster, than plain values under Snappy.
_SPLIT_COLUMNS = {field.name: "BYTE_STREAM_SPLIT" for field in SCHEMA if field.type == pa.float64()}
# Min/max statistics (which let a reader skip row groups when it filters) only
# for the integer keys: on the strings they slow the write, every value being
# compared, and nothing filters on timestamps.
_STATS_COLUMNS = [name for name, kind in REP_KEY_FIELDS if pa.types.is_integer(kind)]
_PARQUET_OPTIONS = {
    # Dictionary encoding only where values repeat; float columns are unique.
    "use_dictionary": list(_DICT_COLUMNS),
    "compression": "lz4",
    "column_encoding": _SPLIT_COLUMNS,
    "write_statistics": _STATS_COLUMNS,
    # No Arrow schema in the file: it would name the dictionary types the
    # strings are written from, and it is fixed when the file is opened,
    # before the metadata is complete. Readers get the same column types
    # from the Parquet ones, and the metadata from the file's footer.
    "store_schema": False,
}

# Context keys computed by ingest from the raw files.
INGEST_KEYS = (
    "series",
    "clock",
    "ranks",
    "timer",
    "timers",
    "hosts",
    "mpi_library",
    "mpi_version",
    "sync_method",
    "clock_sync",
    "cache",
    "cold_region_bytes",
    "huge_pages",
    "inject",
    "incomplete_ranks",
    "methods",
)

_RAW_NAME = re.compile(r"^rank-(\d+)\.raw(\.part)?$")
_LAUNCH_NAME = re.compile(r"^launch-(\d+)$")


def _raw_files(run_dir):
    """(launch, rank, path) sorted by launch then rank; a .raw wins over a .part."""
    found = {}
    for ldir in (run_dir / "raw").glob("launch-*"):
        lm = _LAUNCH_NAME.match(ldir.name)
        if not lm or not ldir.is_dir():
            continue
        for f in ldir.iterdir():
            m = _RAW_NAME.match(f.name)
            if not m:
                continue
            key = (int(lm.group(1)), int(m.group(1)))
            if key not in found or found[key].name.endswith(".part"):
                found[key] = f
    return [(lk, rk, found[(lk, rk)]) for lk, rk in sorted(found)]


def _clock_model(rank, sync_blocks):
    """The newest sync block's model; rank 0 is the reference (zero model).

    A model with a missing (null) parameter cannot convert times: the rank's
    global times become NaN, so its samples count as invalid.
    """
    zero = {"offset_s": 0.0, "drift": 0.0, "ref_s": 0.0}
    meta = sync_blocks[-1].meta if sync_blocks else None
    if rank == 0:
        return zero, meta
    if meta is None:
        return None, None
    model = meta.get("model") or {}
    values = {k: model.get(k, 0.0 if k != "offset_s" else None) for k in zero}
    if any(not isinstance(v, (int, float)) for v in values.values()):
        return None, meta
    return {k: float(v) for k, v in values.items()}, meta


# Elements converted per pass: the four passes over them stay in the CPU's cache.
_CHUNK = 1 << 16


def _to_global(local, model, out):
    """Fills `out` with the global times of `local`, in place: no temporary
    column per block."""
    if model is None:
        out[:] = np.nan
        return
    if not (model["offset_s"] or model["drift"] or model["ref_s"]):
        # The reference's own clock: the formula gives each time back (and NaN for an infinite one).
        np.copyto(out, local)
        out[np.isinf(local)] = np.nan
        return
    for i in range(0, len(local), _CHUNK):
        part, o = local[i : i + _CHUNK], out[i : i + _CHUNK]
        np.subtract(part, model["ref_s"], out=o)
        o *= model["drift"]
        o += model["offset_s"]
        np.subtract(part, o, out=o)


class _Columns:
    """Collects blocks, then fills every column once, in its final place.

    Blocks are laid out sorted by (series in run order, launch, rank), so
    each series is one contiguous run of rows: readers can slice instead of
    filtering the whole table once per series. Per-row constants (bench,
    rank, ...) are only broadcast and global times only computed while
    filling, so no per-block copy of a column is ever held: at 100 M rows
    those copies would double the memory ingest needs.
    """

    def __init__(self):
        self.blocks = []  # (sort_key, series_key, block, clock model, {column: value})
        self.dicts = {name: {} for name in _CODED}

    def _code(self, name, value):
        return self.dicts[name].setdefault(value, len(self.dicts[name]))

    def add(self, sort_key, series_key, block, model, strings, ints):
        consts = {name: self._code(name, value) for name, value in strings.items()}
        consts.update(ints)
        self.blocks.append((sort_key, series_key, block, model, consts))

    def fill(self, pool):
        """Allocates every column and fills its blocks in `pool`: (columns,
        {series_key: slice of its rows}, _Filled); strings as (codes, names)."""
        # Taken out of self: once copied, the raw files' buffers can be freed.
        blocks, self.blocks = sorted(self.blocks, key=lambda b: b[0]), []
        total = sum(b[2].nrows for b in blocks)
        out = {
            field.name: np.empty(total, dtype=np.int32 if field.name in self.dicts else _NUMPY[field.type])
            for field in SCHEMA
        }
        slices, pos = {}, 0
        ramp = np.arange(max((b[2].nrows for b in blocks), default=0), dtype=np.int32)
        ends, futures = [], []
        for _, series_key, block, model, consts in blocks:
            rows = slice(pos, pos + block.nrows)
            # numpy lets go of the GIL while it copies and computes: the pool's threads fill side by side.
            futures.append(pool.submit(_fill, out, ramp, rows, block, model, consts))
            ends.append(rows.stop)
            start = slices[series_key].start if series_key in slices else pos
            slices[series_key] = slice(start, pos + block.nrows)
            pos += block.nrows
        coded = {name: (out[name], list(codes)) for name, codes in self.dicts.items()}
        return {**out, **coded}, slices, _Filled(ends, futures)


class _Filled:
    """Which rows of the columns are filled, blocks being filled in row order;
    one per thread that waits (each keeps its own count of blocks seen done)."""

    def __init__(self, ends, futures):
        self.ends, self.futures, self.done = ends, futures, 0

    def another(self):
        """The same blocks, for another thread to wait on."""
        return _Filled(self.ends, self.futures)

    def wait(self, stop):
        """Returns once rows [0, stop) are filled."""
        while self.done < len(self.futures) and (self.done == 0 or self.ends[self.done - 1] < stop):
            self.futures[self.done].result()
            self.done += 1


class _Inline:
    """An executor that runs each task at once, in the calling thread."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def submit(self, fn, *args):
        try:
            return _Done(fn(*args), None)
        except Exception as exc:  # noqa: BLE001 - raised again by result(), as a pool's would be
            return _Done(None, exc)


class _Done:
    """The result of a task _Inline ran (a Future's result(), without its lock)."""

    __slots__ = ("value", "error")

    def __init__(self, value, error):
        self.value, self.error = value, error

    def result(self):
        if self.error is not None:
            raise self.error
        return self.value


def _fill(out, ramp, rows, block, model, consts):
    """Fills a block's rows of every column."""
    for name, value in consts.items():
        out[name][rows] = value
    out["rep"][rows] = ramp[: block.nrows]
    for name in ("t_start", "t_end", "t_sched"):
        local = getattr(block, name)
        out[name + "_local"][rows] = local
        _to_global(local, model, out[name][rows])
    out["valid"][rows] = block.valid


def _to_table(arrays, start=0, stop=None):
    """Rows [start, stop) of the columns as a table, strings as dictionary
    arrays (no copy, and the Parquet writer need not hash them)."""
    cols = []
    for field in SCHEMA:
        value = arrays[field.name]
        if isinstance(value, tuple):
            codes, names = value
            cols.append(
                pa.DictionaryArray.from_arrays(
                    pa.array(codes[start:stop], pa.int32()), pa.array(names, type=pa.string())
                )
            )
        else:
            cols.append(pa.array(value[start:stop], type=field.type))
    return pa.Table.from_arrays(cols, names=SCHEMA.names)


# Rows per row group, as pyarrow's writer cuts a table by default.
ROW_GROUP = 1 << 20
# Rows from which threads fill the columns; below, starting and waiting on
# them costs more than they save.
THREADED_ROWS = ROW_GROUP


def _write(writer, arrays, total, filled):
    """Writes the columns one row group at a time, each once its rows are filled."""
    for start in range(0, max(total, 1), ROW_GROUP):
        stop = min(total, start + ROW_GROUP)
        filled.wait(stop)
        writer.write_table(_to_table(arrays, start, stop), row_group_size=ROW_GROUP)


def _series_entry(meta, launch):
    return {
        "bench": meta.get("bench"),
        "algo": meta.get("algo", "mpi"),
        "size": int(meta.get("size", 0)),
        "launch": launch,
        "reps": meta.get("reps"),
        "stop": meta.get("stop"),
        "window_s": meta.get("window_s"),
        "window_msgs": meta.get("window_msgs"),
        "count": meta.get("count"),
        "datatype": meta.get("datatype"),
        # How its rows become samples (raw schema 2; older files name none).
        **{k: meta[k] for k in ("rule", "unit", "timed_role") if meta.get(k) is not None},
        # How its repetitions started (raw schema 2 engines since window starts
        # could fall back to barriers; the barrier's exit skew since --sync
        # auto); `late` is summed over the ranks.
        **{
            k: meta[k]
            for k in ("start", "fallback_rep", "barrier_skew_s", "warmup_median_s")
            if meta.get(k) is not None
        },
        "invalid": 0,
        # Benchmark parameters (queue depth, computation per message, layer, a
        # skip reason…) when the benchmark records any.
        **({"params": meta["params"]} if meta.get("params") is not None else {}),
    }


def _ranks_per_host(ranks):
    """{host: number of ranks} of the first launch (every launch uses the same hosts)."""
    first = ranks[min(ranks, key=int)] if ranks else {}
    counts = {}
    for entry in first.values():
        counts[entry.get("host")] = counts.get(entry.get("host"), 0) + 1
    return counts


class _Reading:
    """What ingest learns from the raw files, one file at a time."""

    def __init__(self):
        self.cols = _Columns()
        self.series = {}  # (bench, algo, size, launch) -> entry, in run order
        self.order = {}  # (bench, algo, size) -> position in run order
        self.from_idle = set()  # series described so far only by an idle rank's block
        self.clock, self.ranks, self.incomplete = {}, {}, []
        self.traces = []  # "trace" blocks of our own algorithms (trace.py)
        self.methods = []  # "method" blocks of the peers' methods (methods_table.py)
        self.recoveries, self.injects0 = [], {}  # clock recovery errors, once rank 0's injection is known
        self.first_header = None

    def read(self, launch_k, rank_k, path):
        raw = read_raw(path)
        h = raw.header
        launch = int(h.get("launch", launch_k))
        rank = int(h.get("rank", rank_k))
        if not raw.complete:
            self.incomplete.append([launch, rank])
        if h and self.first_header is None:
            self.first_header = h
        model = self._clock(launch, rank, h, [b for b in raw.blocks if b.meta.get("kind") == "sync"])
        for block in raw.blocks:
            if block.meta.get("kind") == "trace":
                self.traces.append((launch, rank, model, block))
            elif block.meta.get("kind") == "method":
                self.methods.append((launch, rank, model, block))
            elif block.meta.get("kind") == "series":
                self._series(launch, rank, model, block)

    def _clock(self, launch, rank, h, syncs):
        """Records the rank's clock entry; returns its model onto rank 0's time."""
        model, sync_meta = _clock_model(rank, syncs)
        host, cpus = h.get("host"), h.get("cpus")
        self.ranks.setdefault(str(launch), {})[str(rank)] = {
            "host": host,
            "cpus": cpus,
            **({"huge_kib": h["huge_kib"]} if "huge_kib" in h else {}),
        }  # --huge-pages: what this rank was granted
        entry = {
            "host": host,
            "cpus": cpus,
            "model": model,
            "phase": sync_meta.get("phase") if sync_meta else None,
            "residual_s": sync_meta.get("residual_s") if sync_meta else None,
            "parent": sync_meta.get("parent") if sync_meta else None,
        }
        if sync_meta and sync_meta.get("recovery_error_s") is not None:
            entry["recovery_error_s"] = sync_meta["recovery_error_s"]  # raw schema 1
        else:
            self.recoveries.append((entry, launch, sync_meta, model, h.get("inject")))
        if rank == 0:
            self.injects0[launch] = h.get("inject")
        self.clock.setdefault(str(launch), {})[str(rank)] = entry
        return model

    def _series(self, launch, rank, model, block):
        meta = block.meta
        key = (meta.get("bench"), meta.get("algo", "mpi"), int(meta.get("size", 0)), launch)
        if key not in self.series:
            self.series[key] = _series_entry(meta, launch)
            if block.nrows == 0:
                self.from_idle.add(key)
        elif block.nrows and key in self.from_idle:
            # Rank 0 sat this one out: describe it by a participating rank.
            self.series[key] = _series_entry(meta, launch)
            self.from_idle.discard(key)
        if block.nrows == 0:
            return  # an idle rank
        if "late_arrived" in meta:
            late = self.series[key].setdefault("late", {"arrived": 0, "left": 0})
            late["arrived"] += int(meta["late_arrived"])
            late["left"] += int(meta["late_left"])
        pos = self.order.setdefault(key[:3], len(self.order))
        self.cols.add(
            (pos, launch, rank),
            key,
            block,
            model,
            strings={"bench": key[0], "algo": key[1], "role": meta.get("role", "member")},
            ints={"size": key[2], "launch": launch, "rank": rank, "peer": int(meta.get("peer", -1))},
        )

    def recover(self):
        """The clock recovery errors of an injected run (raw schema 2)."""
        for entry, launch, sync_meta, model, inject in self.recoveries:
            err = recovery_error(sync_meta, model, inject, self.injects0.get(launch))
            if err is not None:
                entry["recovery_error_s"] = err


def ingest(run_dir, context: dict, derived: dict | None = None, meanwhile=None) -> pa.Table:
    """Read every raw file of a run, write `run_dir/samples.parquet`, return the table
    (strings dictionary-encoded as written; `.cast(SCHEMA)` decodes them).
    Local times become global with each rank's newest sync block. `context` is
    stored in the file metadata with what ingest learns from the raw files
    (INGEST_KEYS); the table carries the same metadata. No raw files: zero rows.
    `derived`, when given, receives the samples derived to count the invalid
    ones, {(bench, algo, size): Samples} of every series measured in one launch
    (what samples.columns_samples gives from the table). `meanwhile(table)` runs
    once the table and `derived` are complete, while the file is still written.
    """
    run_dir = Path(run_dir)
    r = _Reading()
    for launch_k, rank_k, path in _raw_files(run_dir):
        r.read(launch_k, rank_k, path)
    r.recover()
    threaded = sum(b[2].nrows for b in r.cols.blocks) >= THREADED_ROWS
    with (
        atomic_path(run_dir / SAMPLES_FILE) as tmp,
        pq.ParquetWriter(tmp, _to_table(_NO_ROWS).schema, **_PARQUET_OPTIONS) as writer,
        ThreadPoolExecutor(2) if threaded else _Inline() as fillers,
        ThreadPoolExecutor(1) as writing,
    ):
        # From THREADED_ROWS, two threads fill the columns. A row group is
        # encoded (the writer releases the GIL) as soon as its rows are
        # filled, and invalid samples, which the metadata in the file's
        # footer needs, are counted meanwhile, each series once it is filled.
        arrays, series_rows, filled = r.cols.fill(fillers)
        written = writing.submit(_write, writer, arrays, len(arrays["rep"]), filled)
        samples = _count_invalid(arrays, r.series, series_rows, filled.another())
        metadata = _metadata(
            context, r.series, r.clock, r.ranks, r.incomplete, r.first_header or {}, method_entries(r.methods)
        )
        if derived is not None:
            launches = {}
            for bench, algo, size, launch in samples:
                launches.setdefault((bench, algo, size), []).append(launch)
            derived.update({key: samples[(*key, found[0])] for key, found in launches.items() if len(found) == 1})
        table = _to_table(arrays).replace_schema_metadata(metadata)
        if meanwhile is not None:
            meanwhile(table)
        written.result()
        writer.add_key_value_metadata(metadata)
    write_trace(run_dir, r.traces)  # trace.parquet, when the run traced messages
    write_methods(run_dir, r.methods)  # methods.parquet, when the run measured the peers' methods
    return table


def _metadata(context, series, clock, ranks, incomplete, first_header, methods):
    """The file's metadata: the context with what ingest learnt (INGEST_KEYS)."""
    ctx = {
        **context,
        **{
            "series": list(series.values()),
            "clock": clock,
            "ranks": ranks,
            "timer": first_header.get("timer"),
            "timers": first_header.get("timers"),
            "hosts": _ranks_per_host(ranks),
            "mpi_library": first_header.get("mpi_library"),
            "mpi_version": first_header.get("mpi_version"),
            "sync_method": first_header.get("sync_method"),
            "clock_sync": first_header.get("clock_sync"),
            "cache": first_header.get("cache"),
            "cold_region_bytes": first_header.get("cold_region_bytes"),
            "huge_pages": bool(first_header.get("huge_pages")),
            "inject": first_header.get("inject"),
            "incomplete_ranks": incomplete,
            **({"methods": methods} if methods else {}),
        },
    }
    return {META_VERSION: str(SCHEMA_VERSION).encode(), META_CONTEXT: json.dumps(ctx, default=str).encode()}


def _count_invalid(arrays, series, series_rows, filled):
    """Fill each series entry's `invalid` with its number of invalid samples,
    once its rows are `filled`; returns the samples of each, {(bench, algo,
    size, launch): Samples}."""
    derived = {}
    for key, rows in series_rows.items():
        filled.wait(rows.stop)
        # Strings stay codes: the rules compare a whole column with a name at a time.
        cols = {name: Coded(*arrays[name])[rows] if name in _CODED else arrays[name][rows] for name in COLUMNS}
        entry = series[key]
        wm = entry.get("window_msgs") or DEFAULT_WINDOW_MSGS
        rule, timed_role = rule_of(entry.get("rule"), entry.get("timed_role"), key[0], key[1])
        derived[key] = derive(rule, key[2], cols, {key[3]: wm}, timed_role)
        entry["invalid"] = derived[key].n_invalid
    return derived


def _context_v1(metadata, run_dir):
    ctx = json.loads(metadata.get(META_CONTEXT, b"{}"))
    # context.json is rewritten by the runner (e.g. the final status), so it
    # wins for its own keys; what ingest derived from raw files stays.
    cj = run_dir / "context.json"
    if cj.exists():
        outer = checks.context(read_json(cj, hint=checks.RESTORE), cj)
        ctx.update({k: v for k, v in outer.items() if k not in INGEST_KEYS})
    return ctx


_CONTEXT_READERS = {"1": _context_v1}


def _samples_path(run_dir):
    path = run_dir / SAMPLES_FILE
    if not path.exists():
        imported_run(run_dir)
        raise UsageError(
            f"{run_dir} has no {SAMPLES_FILE}: the run did not get as far as storing "
            "its samples (see its context.json for the error)"
        )
    return path


def imported_run(run_dir) -> None:
    """Refuses a run of kind imported (`mpiscope import`): it holds a tool's
    summary numbers, no samples to analyse."""
    try:
        context = read_json(Path(run_dir) / "context.json")
    except InputError:
        return
    imported = context.get("imported") if isinstance(context, dict) else None
    if context.get("kind") == "imported" and isinstance(imported, dict):
        raise UsageError(
            f"{run_dir} is an imported run ({imported.get('tool')} output from "
            f"{imported.get('source')}): it holds the tool's own summary numbers, no "
            "samples to analyse; `mpiscope show RUN` prints them, `mpiscope history` "
            "shows them as series; the other analyses need a run mpiscope measured"
        )


def _context_reader(path, metadata):
    version = (metadata or {}).get(META_VERSION)
    if version is None:
        raise UsageError(f"{path} is not an mpiscope samples file (no schema version)")
    reader = _CONTEXT_READERS.get(version.decode())
    if reader is None:
        raise UsageError(
            f"{path} has schema version {version.decode()}, which this mpiscope does not "
            f"read (it reads {', '.join(_CONTEXT_READERS)}); use the mpiscope version that "
            "wrote it"
        )
    return reader


def _damaged(path, exc):
    """The error for a samples file that cannot be read (cut off, overwritten)."""
    why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    run_dir = path.parent
    fix = (
        (f"; its raw files are kept: `mpiscope runs ingest {run_dir}` stores the run again from them")
        if (run_dir / "raw").is_dir()
        else "; the run has no raw files to rebuild it from"
    )
    return UsageError(f"{path} is damaged: it cannot be read as Parquet ({why}){fix}")


# What deriving samples reads (store/samples.py): the series' keys and COLUMNS.
SAMPLE_COLUMNS = [name for name in SCHEMA.names if name in COLUMNS or name in ("bench", "algo", "size")]
_STRING_COLUMNS = [field.name for field in SCHEMA if field.type == pa.string()]


def load(run_dir, for_samples=False) -> tuple[pa.Table, Run]:
    """Read `run_dir/samples.parquet`: (table, run). Branches on the schema version.

    `for_samples` reads only what deriving samples needs (SAMPLE_COLUMNS),
    strings dictionary-encoded and each column in one piece: a third less to
    decode, and numpy views of the columns instead of copies.
    """
    run_dir = Path(run_dir)
    path = _samples_path(run_dir)
    try:
        if for_samples:
            table = read_parquet(path, columns=SAMPLE_COLUMNS, dictionary=_STRING_COLUMNS).combine_chunks()
        else:
            table = read_parquet(path)
    except InputError as exc:
        raise _damaged(path, exc.problem) from None
    reader = _context_reader(path, table.schema.metadata)
    checks.timer_reads(table, TIME_COLUMNS, path, "the samples file", rebuild_hint(run_dir))
    return table, Run.from_context(reader(table.schema.metadata, run_dir), run_dir)


def load_context(run_dir) -> dict:
    """The context of `run_dir/samples.parquet` without reading its rows."""
    run_dir = Path(run_dir)
    path = _samples_path(run_dir)
    try:
        metadata = parquet_metadata(path)
    except InputError as exc:
        raise _damaged(path, exc.problem) from None
    return _context_reader(path, metadata)(metadata, run_dir)
