"""Raw per-rank files -> one Parquet table per run (samples.parquet).

One row per rank × repetition, with the local timestamps as recorded and the
same timestamps on the global clock (rank 0's timer), so every number
derived later can be traced back to the row that produced it. Run-level
facts (series, clock models, hosts) go into the file's metadata.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from . import SCHEMA_VERSION
from .atomic import atomic_path
from .errors import UsageError
from .rawfile import read_raw
from .samples import COLUMNS, DEFAULT_WINDOW_MSGS, derive
from .rep_key import REP_KEY_FIELDS
from .trace import write_trace

SAMPLES_FILE = "samples.parquet"
META_VERSION = b"mpiscope.schema_version"
META_CONTEXT = b"mpiscope.context"

SCHEMA = pa.schema(REP_KEY_FIELDS + [
    ("role", pa.string()),
    ("peer", pa.int32()),
    ("t_start_local", pa.float64()),
    ("t_end_local", pa.float64()),
    ("t_sched_local", pa.float64()),
    ("t_start", pa.float64()),
    ("t_end", pa.float64()),
    ("t_sched", pa.float64()),
    ("valid", pa.bool_()),
])

_NUMPY = {pa.int64(): np.int64, pa.int32(): np.int32, pa.float64(): np.float64,
          pa.bool_(): np.bool_}

_DICT_COLUMNS = ("bench", "algo", "size", "launch", "rank", "role", "peer")

# Context keys computed by ingest from the raw files.
INGEST_KEYS = ("series", "clock", "ranks", "timer", "timers", "hosts", "mpi_library", "mpi_version", "sync_method",
               "clock_sync", "cache", "cold_region_bytes", "inject",
               "incomplete_ranks")

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


def _to_global(local, model):
    if model is None:
        return np.full(len(local), np.nan)
    return local - (model["offset_s"] + model["drift"] * (local - model["ref_s"]))


class _Columns:
    """Accumulates per-block arrays; strings are kept as dictionary codes.

    Blocks are concatenated sorted by (series in run order, launch, rank), so
    each series is one contiguous run of rows: readers can slice instead of
    filtering the whole table once per series.
    """

    def __init__(self):
        self.blocks = []   # (sort_key, series_key, {column: array})
        self.dicts = {"bench": {}, "algo": {}, "role": {}}

    def _code(self, name, value):
        return self.dicts[name].setdefault(value, len(self.dicts[name]))

    def add(self, sort_key, series_key, n, strings, ints, floats, valid):
        cols = {name: np.full(n, self._code(name, value), dtype=np.int32)
                for name, value in strings.items()}
        cols.update({name: np.full(n, value, dtype=dtype) for name, (value, dtype) in ints.items()})
        cols["rep"] = np.arange(n, dtype=np.int32)
        cols.update({name: np.asarray(arr, dtype=np.float64) for name, arr in floats.items()})
        cols["valid"] = np.asarray(valid, dtype=bool)
        self.blocks.append((sort_key, series_key, cols))

    def arrays(self):
        """(columns, {series_key: slice of its rows})."""
        blocks = sorted(self.blocks, key=lambda b: b[0])
        slices, pos = {}, 0
        for _, series_key, cols in blocks:
            n = len(cols["rep"])
            start = slices[series_key].start if series_key in slices else pos
            slices[series_key] = slice(start, pos + n)
            pos += n
        out = {}
        for field in SCHEMA:
            parts = [cols[field.name] for _, _, cols in blocks]
            if field.name in self.dicts:
                codes = np.concatenate(parts) if parts else np.array([], dtype=np.int32)
                out[field.name] = (codes, list(self.dicts[field.name]))
            else:
                out[field.name] = (np.concatenate(parts) if parts
                                   else np.array([], dtype=_NUMPY[field.type]))
        return out, slices


def _to_table(arrays, metadata):
    cols = []
    for field in SCHEMA:
        value = arrays[field.name]
        if isinstance(value, tuple):
            codes, names = value
            dictionary = pa.array(names, type=pa.string())
            cols.append(pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), dictionary)
                        .cast(pa.string()))
        else:
            cols.append(pa.array(value, type=field.type))
    return pa.Table.from_arrays(cols, schema=SCHEMA.with_metadata(metadata))


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


def ingest(run_dir, context: dict) -> pa.Table:
    """Read every raw file of a run, write `run_dir/samples.parquet`, return the table.

    Local times are converted to global ones with each rank's newest sync
    block. `context` is stored in the file metadata together with what
    ingest learns from the raw files (see INGEST_KEYS); the table returned
    carries the same metadata. A run without raw files gives zero rows.
    """
    run_dir = Path(run_dir)
    ctx = dict(context)
    cols = _Columns()
    series = {}        # (bench, algo, size, launch) -> entry, in run order
    order = {}         # (bench, algo, size) -> position in run order
    from_idle = set()  # series described so far only by an idle rank's block
    clock, ranks, incomplete = {}, {}, []
    traces = []        # "trace" blocks of our own algorithms (trace.py)
    first_header = None

    for launch_k, rank_k, path in _raw_files(run_dir):
        raw = read_raw(path)
        h = raw.header
        launch = int(h.get("launch", launch_k))
        rank = int(h.get("rank", rank_k))
        if not raw.complete:
            incomplete.append([launch, rank])
        if h and first_header is None:
            first_header = h
        syncs = [b for b in raw.blocks if b.meta.get("kind") == "sync"]
        model, sync_meta = _clock_model(rank, syncs)
        host, cpus = h.get("host"), h.get("cpus")
        ranks.setdefault(str(launch), {})[str(rank)] = {"host": host, "cpus": cpus}
        entry = {"host": host, "cpus": cpus, "model": model,
                 "phase": sync_meta.get("phase") if sync_meta else None,
                 "residual_s": sync_meta.get("residual_s") if sync_meta else None,
                 "parent": sync_meta.get("parent") if sync_meta else None}
        if sync_meta and sync_meta.get("recovery_error_s") is not None:
            entry["recovery_error_s"] = sync_meta["recovery_error_s"]
        clock.setdefault(str(launch), {})[str(rank)] = entry

        for block in raw.blocks:
            meta = block.meta
            if meta.get("kind") == "trace":
                traces.append((launch, rank, model, block))
            if meta.get("kind") != "series":
                continue
            key = (meta.get("bench"), meta.get("algo", "mpi"), int(meta.get("size", 0)), launch)
            if key not in series:
                series[key] = _series_entry(meta, launch)
                if block.nrows == 0:
                    from_idle.add(key)
            elif block.nrows and key in from_idle:
                # Rank 0 sat this one out: describe it by a participating rank.
                series[key] = _series_entry(meta, launch)
                from_idle.discard(key)
            if block.nrows == 0:
                continue  # an idle rank
            pos = order.setdefault(key[:3], len(order))
            cols.add(
                (pos, launch, rank), key, block.nrows,
                strings={"bench": key[0], "algo": key[1], "role": meta.get("role", "member")},
                ints={"size": (key[2], np.int64), "launch": (launch, np.int32),
                      "rank": (rank, np.int32), "peer": (int(meta.get("peer", -1)), np.int32)},
                floats={"t_start_local": block.t_start, "t_end_local": block.t_end,
                        "t_sched_local": block.t_sched,
                        "t_start": _to_global(block.t_start, model),
                        "t_end": _to_global(block.t_end, model),
                        "t_sched": _to_global(block.t_sched, model)},
                valid=block.valid)

    arrays, series_rows = cols.arrays()
    _count_invalid(arrays, series, series_rows)

    first_header = first_header or {}
    ctx.update({
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
        "inject": first_header.get("inject"),
        "incomplete_ranks": incomplete,
    })
    metadata = {META_VERSION: str(SCHEMA_VERSION).encode(),
                META_CONTEXT: json.dumps(ctx, default=str).encode()}
    table = _to_table(arrays, metadata)
    with atomic_path(run_dir / SAMPLES_FILE) as tmp:
        # Dictionary encoding only where values repeat; float columns are unique.
        pq.write_table(table, tmp, use_dictionary=list(_DICT_COLUMNS))
    write_trace(run_dir, traces)  # trace.parquet, when the run traced messages
    return table


def _count_invalid(arrays, series, series_rows):
    """Fill each series entry's `invalid` with its number of invalid samples."""
    for key, rows in series_rows.items():
        cols = {}
        for name in COLUMNS:
            value = arrays[name]
            if isinstance(value, tuple):
                codes, names = value
                cols[name] = np.array(names, dtype=object)[codes[rows]]
            else:
                cols[name] = value[rows]
        entry = series[key]
        wm = entry.get("window_msgs") or DEFAULT_WINDOW_MSGS
        entry["invalid"] = derive(key[0], key[2], cols, {key[3]: wm}, algo=key[1]).n_invalid


def _context_v1(metadata, run_dir):
    ctx = json.loads(metadata.get(META_CONTEXT, b"{}"))
    # context.json is rewritten by the runner (e.g. the final status), so it
    # wins for its own keys; what ingest derived from raw files stays.
    cj = run_dir / "context.json"
    if cj.exists():
        try:
            outer = json.loads(cj.read_text())
        except json.JSONDecodeError as exc:
            raise UsageError(f"{cj} is not valid JSON ({exc})") from None
        ctx.update({k: v for k, v in outer.items() if k not in INGEST_KEYS})
    return ctx


_CONTEXT_READERS = {"1": _context_v1}


def _samples_path(run_dir):
    path = run_dir / SAMPLES_FILE
    if not path.exists():
        raise UsageError(
            f"{run_dir} has no {SAMPLES_FILE}: the run did not get as far as storing "
            "its samples (see its context.json for the error)")
    return path


def _context_reader(path, metadata):
    version = (metadata or {}).get(META_VERSION)
    if version is None:
        raise UsageError(f"{path} is not an mpiscope samples file (no schema version)")
    reader = _CONTEXT_READERS.get(version.decode())
    if reader is None:
        raise UsageError(
            f"{path} has schema version {version.decode()}, which this mpiscope does not "
            f"read (it reads {', '.join(_CONTEXT_READERS)}); use the mpiscope version that "
            "wrote it")
    return reader


def load(run_dir) -> tuple[pa.Table, dict]:
    """Read `run_dir/samples.parquet`: (table, context). Branches on the schema version."""
    run_dir = Path(run_dir)
    path = _samples_path(run_dir)
    try:
        table = pq.read_table(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise UsageError(f"{path} cannot be read as Parquet ({exc})") from None
    reader = _context_reader(path, table.schema.metadata)
    return table, reader(table.schema.metadata, run_dir)


def load_context(run_dir) -> dict:
    """The context of `run_dir/samples.parquet` without reading its rows."""
    run_dir = Path(run_dir)
    path = _samples_path(run_dir)
    try:
        metadata = pq.read_schema(path).metadata
    except (pa.ArrowInvalid, OSError) as exc:
        raise UsageError(f"{path} cannot be read as Parquet ({exc})") from None
    return _context_reader(path, metadata)(metadata or {}, run_dir)
