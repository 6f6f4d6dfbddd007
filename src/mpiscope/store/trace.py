# SPDX-License-Identifier: BSD-3-Clause
"""Message traces of our own collective algorithms (`mpiscope run --trace`).

The engine records, per rank, when each send and receive of a traced
repetition was posted and completed (local timer) into raw "trace" blocks
(docs/reference/formats/raw-files.md). Ingest converts them to the global clock with the
rank's clock model and writes `trace.parquet` next to `samples.parquet`: one
row per message end (a send or a receive). `messages` pairs every send with
the receive that matched it, which is what a time chart draws as an arrow.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from mpiscope.common.atomic import atomic_path
from mpiscope.common.errors import UsageError
from mpiscope.store import checks
from mpiscope.store.layout import CONTEXT_FILE, rebuild_hint
from mpiscope.store.rep_key import REP_KEY_FIELDS
from mpiscope.common.inputs import InputError, read_json, read_parquet

TRACE_FILE = "trace.parquet"
META_TRACE = b"mpiscope.store.trace"
OPS = ("send", "recv")

SCHEMA = pa.schema(
    REP_KEY_FIELDS
    + [
        ("seq", pa.int32()),
        ("op", pa.string()),
        ("peer", pa.int32()),
        ("tag", pa.int32()),
        ("bytes", pa.int64()),
        ("t_post_local", pa.float64()),
        ("t_done_local", pa.float64()),
        ("t_post", pa.float64()),
        ("t_done", pa.float64()),
    ]
)


def _to_global(local, model):
    if model is None:
        return np.full(len(local), np.nan)
    return local - (model["offset_s"] + model["drift"] * (local - model["ref_s"]))


def write_trace(run_dir, traces) -> pa.Table | None:
    """Write `run_dir/trace.parquet` from [(launch, rank, clock model, RawBlock)].

    Returns the table, or None (and writes nothing) when there are no traces.
    The file's metadata lists every trace block: its series, rank, the
    repetitions it covers completely and the events that did not fit.
    """
    if not traces:
        return None
    parts, blocks = [], []
    for launch, rank, model, block in traces:
        meta, cols = block.meta, block.columns
        n = block.nrows
        blocks.append(
            {
                "bench": meta.get("bench"),
                "algo": meta.get("algo"),
                "size": int(meta.get("size", 0)),
                "launch": launch,
                "rank": rank,
                "reps": meta.get("reps"),
                "reps_traced": meta.get("reps_traced"),
                "dropped": meta.get("dropped", 0),
                "events": n,
            }
        )
        if n == 0:
            continue
        post = np.asarray(cols["t_post"], dtype=np.float64)
        done = np.asarray(cols["t_done"], dtype=np.float64)
        parts.append(
            {
                "bench": np.full(n, meta.get("bench"), dtype=object),
                "algo": np.full(n, meta.get("algo"), dtype=object),
                "size": np.full(n, int(meta.get("size", 0)), dtype=np.int64),
                "launch": np.full(n, launch, dtype=np.int32),
                "rep": np.asarray(cols["rep"], dtype=np.int32),
                "rank": np.full(n, rank, dtype=np.int32),
                "seq": np.asarray(cols["seq"], dtype=np.int32),
                "op": np.array(OPS, dtype=object)[np.asarray(cols["op"], dtype=np.int64)],
                "peer": np.asarray(cols["peer"], dtype=np.int32),
                "tag": np.asarray(cols["tag"], dtype=np.int32),
                "bytes": np.asarray(cols["bytes"], dtype=np.int64),
                "t_post_local": post,
                "t_done_local": done,
                "t_post": _to_global(post, model),
                "t_done": _to_global(done, model),
            }
        )
    arrays = []
    for field in SCHEMA:
        values = [p[field.name] for p in parts]
        if not values:
            arrays.append(pa.array([], type=field.type))
        else:
            arrays.append(pa.array(np.concatenate(values), type=field.type))
    table = pa.Table.from_arrays(arrays, schema=SCHEMA.with_metadata({META_TRACE: json.dumps(blocks).encode()}))
    with atomic_path(Path(run_dir) / TRACE_FILE) as tmp:
        pq.write_table(table, tmp, use_dictionary=["bench", "algo", "op"])
    return table


def has_trace(run_dir) -> bool:
    return (Path(run_dir) / TRACE_FILE).exists()


def load_trace(run_dir) -> tuple[pa.Table, list]:
    """(trace table, list of trace blocks) of a run; UsageError if it has none."""
    path = Path(run_dir) / TRACE_FILE
    if not path.exists():
        if _traced(run_dir):  # measured with --trace: the raw files hold the trace
            raise UsageError(
                f"{path} is missing: `mpiscope runs ingest {run_dir}` stores it again from the run's raw files"
            )
        raise UsageError(
            f"run {Path(run_dir).name} has no message trace: measure with `mpiscope run --bench B --algo A --trace`"
        )
    st = path.stat()
    return _read_trace(str(path.resolve()), st.st_mtime_ns, st.st_size)


def _traced(run_dir) -> bool:
    """Whether the run was measured with --trace, as its context says."""
    try:
        plan = read_json(Path(run_dir) / CONTEXT_FILE).get("plan") or {}
    except (InputError, AttributeError):
        return False
    return isinstance(plan, dict) and bool(plan.get("trace"))


@functools.lru_cache(maxsize=4)
def _read_trace(path, mtime_ns, size):
    """Reads a trace file once per version of it (a report draws many charts)."""
    path = Path(path)
    hint = rebuild_hint(path.parent)
    table = read_parquet(path, "the trace", hint)
    try:
        blocks = json.loads((table.schema.metadata or {}).get(META_TRACE, b"[]"))
    except ValueError:
        blocks = None
    if not isinstance(blocks, list) or not all(isinstance(b, dict) for b in blocks):
        raise UsageError(f"the trace {path} is damaged: its list of trace blocks cannot be read; {hint}")
    table = checks.table(table, SCHEMA, path, "the trace", hint)
    checks.timer_reads(table, ("t_post_local", "t_done_local", "t_post", "t_done"), path, "the trace", hint)
    problem = _impossible(table)
    if problem:
        raise UsageError(f"the trace {path} is damaged: {problem}; {hint}")
    return table, blocks


def _impossible(table) -> str | None:
    """What in the events the engine never records, or None: its local times
    are timer reads (the global ones NaN only without a clock model)."""
    col = {
        name: table[name].to_numpy(zero_copy_only=False) for name in ("rank", "bytes", "t_post_local", "t_done_local")
    }
    if (col["rank"] < 0).any() or (col["bytes"] < 0).any():
        return "a negative rank or byte count"
    return checks.timed_spans(col["t_post_local"], col["t_done_local"], "an event")


def traced_series(table) -> list[tuple]:
    """(bench, algo, size) of every traced series, in table order."""
    seen = {}
    for b, a, s in zip(table["bench"].to_pylist(), table["algo"].to_pylist(), table["size"].to_pylist()):
        seen.setdefault((b, a, int(s)), None)
    return list(seen)


def complete_reps(blocks, bench, algo, size, launch=0) -> int:
    """Repetitions traced completely on every rank of one series and launch."""
    counts = [
        b.get("reps_traced") or 0
        for b in blocks
        if (b["bench"], b["algo"], b["size"], b["launch"]) == (bench, algo, size, launch)
    ]
    return min(counts) if counts else 0


def select(table, bench, algo, size, launch=0, rep=None) -> pa.Table:
    """The events of one series (and launch, and repetition if given), ordered
    by rank and sequence."""
    mask = pc.and_(
        pc.and_(pc.equal(table["bench"], bench), pc.equal(table["algo"], algo)),
        pc.and_(pc.equal(table["size"], size), pc.equal(table["launch"], launch)),
    )
    if rep is not None:
        mask = pc.and_(mask, pc.equal(table["rep"], rep))
    sub = table.filter(mask)
    return sub.take(pc.sort_indices(sub, [("rep", "ascending"), ("rank", "ascending"), ("seq", "ascending")]))


@dataclass(frozen=True)
class Message:
    """One message: the send on `src` matched with the receive on `dst`."""

    src: int
    dst: int
    tag: int
    bytes: int
    send_post: float
    send_done: float
    recv_post: float
    recv_done: float
    send_seq: int = -1  # the events' positions on their ranks
    recv_seq: int = -1


def messages(events: pa.Table) -> list[Message]:
    """Pairs the sends and receives of one repetition.

    MPI matches messages between two ranks with the same tag in the order
    they were sent and the receives were posted, so the k-th send from a to
    b with tag t is the k-th receive on b from a with tag t. Ends without a
    partner (a rank's trace was cut short) are left out.
    """
    cols = {
        name: events[name].to_pylist() for name in ("rank", "seq", "op", "peer", "tag", "bytes", "t_post", "t_done")
    }
    order = sorted(range(events.num_rows), key=lambda i: (cols["rank"][i], cols["seq"][i]))
    sends, recvs = {}, {}
    for i in order:
        if cols["op"][i] == "send":
            sends.setdefault((cols["rank"][i], cols["peer"][i], cols["tag"][i]), []).append(i)
        else:
            recvs.setdefault((cols["peer"][i], cols["rank"][i], cols["tag"][i]), []).append(i)
    out = []
    for key, slist in sends.items():
        for s, r in zip(slist, recvs.get(key, [])):
            out.append(
                Message(
                    key[0],
                    key[1],
                    key[2],
                    int(cols["bytes"][s]),
                    cols["t_post"][s],
                    cols["t_done"][s],
                    cols["t_post"][r],
                    cols["t_done"][r],
                    cols["seq"][s],
                    cols["seq"][r],
                )
            )
    out.sort(key=lambda m: (m.send_post, m.src))
    return out
