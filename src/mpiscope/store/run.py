# SPDX-License-Identifier: BSD-3-Clause
"""A stored run as a typed object: what the runner recorded and what ingest
learnt from the raw files, read by attribute instead of by key.

`Run.context` keeps the whole context as stored, for JSON output and export;
analyses read the typed fields. Old runs miss some keys: those fields are
None (or empty), never an error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported at run time: `mpiscope show` starts without it
if TYPE_CHECKING:
    from typing import Self


@dataclass(frozen=True)
class SeriesRecord:
    """One benchmark × variant × size × launch as the engine recorded it."""

    bench: str
    algo: str
    size: int
    launch: int
    reps: int | None = None
    stop: str | None = None
    window_s: float | None = None
    window_msgs: int | None = None
    count: int | None = None
    datatype: str | None = None
    invalid: int = 0
    params: dict | None = None
    rule: str | None = None  # None: recorded before the engine named rules
    unit: str | None = None
    timed_role: str | None = None
    start: str | None = None  # "window", "barrier", "window,barrier" (fell back); None: not recorded
    fallback_rep: int | None = None  # first repetition started by a barrier after the fallback
    late: dict | None = None  # window starts reached late ("arrived") or left late ("left"), all ranks
    barrier_skew_s: float | None = None  # the warm-up barriers' median exit skew (--sync auto's measure)
    warmup_median_s: float | None = None  # the warm-up's median repetition (sizes the window)

    @classmethod
    def from_entry(cls, e: dict) -> SeriesRecord:
        return cls(
            e.get("bench"),
            e.get("algo", "mpi"),
            int(e.get("size", 0)),
            int(e.get("launch", 0)),
            e.get("reps"),
            e.get("stop"),
            e.get("window_s"),
            e.get("window_msgs"),
            e.get("count"),
            e.get("datatype"),
            int(e.get("invalid") or 0),
            e.get("params"),
            e.get("rule"),
            e.get("unit"),
            e.get("timed_role"),
            e.get("start"),
            e.get("fallback_rep") if e.get("fallback_rep", -1) >= 0 else None,
            e.get("late"),
            e.get("barrier_skew_s"),
            e.get("warmup_median_s"),
        )


@dataclass(frozen=True)
class Run:
    context: dict = field(repr=False)
    path: Path | None = None
    run_id: str = "?"
    status: str | None = None
    error: str | None = None
    created: str | None = None
    label: str | None = None  # mpiscope run --label
    kind: str = "measurement"  # or "profile" (mpiscope profile)
    mpi: str | None = None
    mpi_library: str | None = None
    np: int | None = None
    launches: int | None = None
    seed: int | None = None
    git_sha: str | None = None
    command: tuple = ()
    benches: tuple = ()
    timer: dict = field(default_factory=dict)
    hosts: dict | None = None  # host -> ranks on it (first launch)
    ranks: dict = field(default_factory=dict)  # launch -> rank -> {host, cpus}
    clock: dict = field(default_factory=dict)  # launch -> rank -> clock model and errors
    sync_method: str | None = None
    cache: str | None = None
    rto_min: dict | None = None
    refined_sizes: dict = field(default_factory=dict)
    incomplete_ranks: tuple = ()
    cluster: dict | None = None
    plan: dict = field(default_factory=dict)
    series: tuple = ()  # SeriesRecord, in run order

    @classmethod
    def from_context(cls, context: dict, path=None) -> Self:
        c = context
        return cls(
            context=c,
            path=Path(path) if path is not None else None,
            run_id=str(c.get("run_id") or (Path(path).name if path is not None else "?")),
            status=c.get("status"),
            error=c.get("error"),
            created=c.get("created"),
            label=c.get("label"),
            kind=c.get("kind") or "measurement",
            mpi=c.get("mpi"),
            mpi_library=c.get("mpi_library"),
            np=c.get("np"),
            launches=c.get("launches"),
            seed=c.get("seed"),
            git_sha=c.get("git_sha"),
            command=tuple(c.get("command") or ()),
            benches=tuple(c.get("benches") or ()),
            timer=c.get("timer") or {},
            hosts=c.get("hosts"),
            ranks=c.get("ranks") or {},
            clock=c.get("clock") or {},
            sync_method=c.get("sync_method"),
            cache=c.get("cache"),
            rto_min=c.get("rto_min"),
            refined_sizes=c.get("refined_sizes") or {},
            incomplete_ranks=tuple(tuple(x) for x in c.get("incomplete_ranks") or ()),
            cluster=c.get("cluster"),
            plan=c.get("plan") or {},
            series=tuple(SeriesRecord.from_entry(e) for e in c.get("series") or ()),
        )

    @property
    def library(self) -> str:
        """The first line of the MPI library's version string ('' if unknown)."""
        return (str(self.mpi_library or "").strip().splitlines() or [""])[0]

    def entries(self, bench, size=None, algo=None) -> list[SeriesRecord]:
        """The records (one per launch) of a benchmark, or of one series."""
        return [
            s
            for s in self.series
            if s.bench == bench and (size is None or s.size == int(size)) and (algo is None or s.algo == algo)
        ]
