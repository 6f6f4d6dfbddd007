# SPDX-License-Identifier: BSD-3-Clause
"""Points grouped into series of comparable numbers, and the `--where`
filters that select them.

Two runs' medians of a benchmark and size are comparable when they were
measured on the same machine, on as many nodes with as many ranks on each,
with the same MPI library, the same method (timer, cache, launcher) and the
same start scheme (--sync). The MPI library's version, the node names, the
kernel and the rest are not part of the key: they are what changes between
nights, and what `changes.py` names at a change point (`--split-version`
makes the library's version part of the key)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import datetime

from mpiscope.common.errors import UsageError
from mpiscope.common.sizes import format_size, parse_size
from mpiscope.history.points import Point, timestamp
from mpiscope.store.labels import bench_label

UNKNOWN = "unknown"
WHERE_KEYS = ("bench", "size", "np", "label", "mpi", "machine", "since", "until")


@dataclass(frozen=True, order=True)
class SeriesKey:
    bench: str  # benchmark, /variant for our own algorithms
    size: int
    machine: str
    nodes: int
    ppn: str  # ranks per node ("1-4" when nodes differ)
    mpi: str
    method: str
    start: str
    unit: str

    def name(self) -> str:
        return f"{self.bench} {format_size(self.size)} B"

    def where(self) -> str:
        return (
            f"{self.machine}, {self.nodes} node{'s' if self.nodes != 1 else ''} × {self.ppn} "
            f"rank{'s' if self.ppn != '1' else ''}, {self.mpi}, {self.method}, sync {self.start}"
        )

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Series:
    key: SeriesKey
    points: list = field(default_factory=list)  # oldest first


def machine_of(context) -> str:
    plan = context.get("plan") or {}
    if plan.get("cluster"):
        return f"cluster {plan['cluster']}"
    return (
        (context.get("env") or {}).get("SLURM_CLUSTER_NAME")
        or (context.get("writer") or {}).get("host")
        or (context.get("machine") or {}).get("host")
        or UNKNOWN
    )


def _nodes(context):
    hosts = context.get("hosts") or {}
    if hosts:
        counts = sorted(set(hosts.values()))
        ppn = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
        return len(hosts), ppn
    nodes, np = context.get("nodes"), context.get("np")  # an imported run's, as the options gave them
    if isinstance(nodes, int) and isinstance(np, int) and nodes > 0 and np % nodes == 0:
        return nodes, str(np // nodes)
    return 0, str(np or UNKNOWN)


def mpi_of(context, version=True) -> str:
    identity = context.get("mpi_identity") or {}
    name = identity.get("implementation") or context.get("mpi") or UNKNOWN
    return f"{name} {identity['version']}" if version and identity.get("version") else name


def key_of(p: Point, split_version=False) -> SeriesKey:
    plan = p.context.get("plan") or {}
    nodes, ppn = _nodes(p.context)
    method = (
        f"timer {plan.get('timer') or UNKNOWN}, cache {plan.get('cache') or UNKNOWN}, "
        f"{p.context.get('launcher') or UNKNOWN}"
    )
    if p.context.get("kind") == "imported":  # the tool it came from (imports/imported_runs.py)
        method = str((p.context.get("imported") or {}).get("method") or "imported")
    return SeriesKey(
        bench_label(p.bench, p.algo),
        p.size,
        machine_of(p.context),
        nodes,
        ppn,
        mpi_of(p.context, split_version),
        method,
        str(plan.get("sync") or UNKNOWN),
        p.unit,
    )


def group(points, split_version=False) -> list[Series]:
    """Series of `points` (oldest first), in the order of their keys."""
    by_run_key = {}  # runs that share a context share its key: computed once for them
    for p in points:
        by_run_key.setdefault((id(p.context), p.bench, p.algo, p.size, p.unit), []).append(p)
    by_key = {}
    for same in by_run_key.values():
        by_key.setdefault(key_of(same[0], split_version), []).extend(same)
    return [Series(k, sorted(by_key[k], key=lambda p: (p.when, p.run_id))) for k in sorted(by_key)]


# ---------------------------------------------------------------- --where


@dataclass(frozen=True)
class Where:
    key: str
    values: tuple

    def __call__(self, p: Point) -> bool:
        k = self.key
        if k == "bench":
            return p.bench in self.values or bench_label(p.bench, p.algo) in self.values
        if k == "size":
            return p.size in self.values
        if k == "np":
            return p.context.get("np") in self.values
        if k == "label":
            return p.label in self.values
        if k == "mpi":
            return any(v in (mpi_of(p.context, False), mpi_of(p.context)) for v in self.values)
        if k == "machine":
            return machine_of(p.context) in self.values
        if k == "since":
            return p.when >= self.values[0]
        return p.when <= self.values[0]  # until


def parse_where(text) -> Where:
    """`KEY=VALUE[,VALUE...]`: a filter of points; UsageError when malformed."""
    key, eq, value = str(text).partition("=")
    key = key.strip()
    if not eq or key not in WHERE_KEYS:
        raise UsageError(
            f"--where '{text}': the key must be one of {', '.join(WHERE_KEYS)}, "
            "written KEY=VALUE (e.g. bench=allreduce, size=64K, np=16, "
            "since=2026-03-01)"
        )
    words = [w.strip() for w in value.split(",") if w.strip()]
    if not words:
        raise UsageError(f"--where '{text}' gives no value after '='")
    if key == "size":
        return Where(key, tuple(_size(w, text) for w in words))
    if key == "np":
        if not all(w.isdigit() for w in words):
            raise UsageError(f"--where '{text}': np takes whole numbers of ranks, e.g. np=16")
        return Where(key, tuple(int(w) for w in words))
    if key in ("since", "until"):
        if len(words) != 1:
            raise UsageError(f"--where '{text}': {key} takes one date")
        return Where(key, (_date(words[0], key, text),))
    return Where(key, tuple(words))


def _size(word, text):
    try:
        return parse_size(word)
    except UsageError:
        raise UsageError(
            f"--where '{text}': '{word}' is not a size (bytes with an optional unit B/K/M/G, e.g. 64K)"
        ) from None


def _date(word, key, text) -> datetime:
    when = timestamp(word)
    if when == datetime.min:
        raise UsageError(f"--where '{text}': '{word}' is not a date; write YYYY-MM-DD or YYYY-MM-DDTHH:MM")
    if key == "until" and len(word) == 10:  # a day: until its end
        when = when.replace(hour=23, minute=59, second=59)
    return when


def select(points, wheres) -> list[Point]:
    return [p for p in points if all(w(p) for w in wheres)]
