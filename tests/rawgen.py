# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: writes raw files in the engine's format (docs/reference/formats/raw-files.md)
and synthesizes whole run directories with known clocks and known sample
values, so tests can check every derived number.

Timeline of a synthetic series: repetition i is scheduled at global time
S_i = T0 + i * PERIOD (+ 16 s per series, + 1024 s per launch). Each rank's
rows are built in global time from the expected values and converted to the
rank's local time with its clock (the inverse of the model ingest applies).
"""

from __future__ import annotations

import functools
import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from snapshot import SNAPSHOTS

MAGIC = b"MPSCRAW1"
T0 = 100.0
PERIOD = 0.0625           # 2**-4 s between repetitions: dyadic, so exact
SERIES_STRIDE = 16.0
LAUNCH_STRIDE = 1024.0
SMALL = 2.0 ** -20        # ~1 µs, an exact "little while"
MPI_LIBRARY = ("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, "
               "repo rev: v4.1.4, May 26, 2022")
COLLECTIVES = ("barrier", "bcast", "reduce", "allreduce", "allgather", "gather",
               "scatter", "alltoall", "reduce_scatter_block")


# ---------------------------------------------------------------- encoding

def encode_header(header: dict, version: int = 1, magic: bytes = MAGIC) -> bytes:
    js = json.dumps(header).encode()
    return magic + struct.pack("<II", version, len(js)) + js


def encode_block(meta: dict, t_start=(), t_end=(), t_sched=(), valid=()) -> bytes:
    js = json.dumps(meta).encode()
    n = len(t_start)
    assert len(t_end) == len(t_sched) == len(valid) == n
    return b"".join([
        b"BLOCK___", struct.pack("<I", len(js)), js, struct.pack("<Q", n),
        np.asarray(t_start, dtype="<f8").tobytes(),
        np.asarray(t_end, dtype="<f8").tobytes(),
        np.asarray(t_sched, dtype="<f8").tobytes(),
        np.asarray(valid, dtype=np.uint8).tobytes(),
        b"ENDBLOCK",
    ])


def _block_args(block):
    if isinstance(block, dict):
        return (block["meta"], block.get("t_start", ()), block.get("t_end", ()),
                block.get("t_sched", ()), block.get("valid", ()))
    if hasattr(block, "meta"):
        return block.meta, block.t_start, block.t_end, block.t_sched, block.valid
    return tuple(block)


def write_raw(path, header: dict, blocks, cut_last: int = 0, version: int | None = None) -> Path:
    """Write a raw file. `blocks` holds dicts (meta, t_start, ...), RawBlocks or
    tuples. `cut_last` drops that many bytes from the end (a crash). The
    binary schema version is the header's unless `version` says otherwise."""
    if version is None:
        version = header.get("schema_version", 1)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    data = encode_header(header, version) + b"".join(encode_block(*_block_args(b)) for b in blocks)
    if cut_last:
        data = data[:-cut_last]
    path.write_bytes(data)
    return path


# ---------------------------------------------------------------- clocks

@dataclass(frozen=True)
class Clock:
    """global = local - (offset_s + drift * (local - ref_s))."""

    offset_s: float = 0.0
    drift: float = 0.0
    ref_s: float = 0.0

    def to_local(self, g):
        g = np.asarray(g, dtype=np.float64)
        if self.drift == 0.0:
            return g + self.offset_s
        return (g + self.offset_s - self.drift * self.ref_s) / (1.0 - self.drift)

    def model(self):
        return {"offset_s": self.offset_s, "drift": self.drift, "ref_s": self.ref_s}


ZERO = Clock()


# ---------------------------------------------------------------- run synthesis

@dataclass
class Expected:
    """Expected samples of one series: dict (launch, rep, source) -> (value, valid)."""

    samples: dict = field(default_factory=dict)

    def valid_values(self):
        return sorted(v for v, ok in self.samples.values() if ok)

    @property
    def n_invalid(self):
        return sum(1 for _, ok in self.samples.values() if not ok)


@dataclass
class SeriesSpec:
    bench: str
    size: int
    values: list            # expected per-rep value (see synth_series for the meaning)
    algo: str = "mpi"
    launches: tuple = (0,)
    late: tuple = ()        # (rank, rep) pairs whose row is invalid
    window_msgs: int = 64
    pairs: tuple = ()       # "pairs" bench: user-listed (a, b)
    stop: str = "ci"
    start: str | None = None  # the series block's "start" (how repetitions started), when set


def _datatype_keys(bench, size):
    """What the engine passes to MPI (native/engine/bench/coll_mpi.c): reductions sum
    max(1, size/4) MPI_INTs, barrier passes nothing, the rest size MPI_BYTEs."""
    if bench == "barrier":
        return {"count": 0, "datatype": "none"}
    if bench in ("reduce", "allreduce", "reduce_scatter_block"):
        return {"count": max(1, size // 4), "datatype": "MPI_INT"}
    return {"count": size, "datatype": "MPI_BYTE"}


@functools.cache
def engine_description():
    """What the engine says of itself (`mpiscope-engine --describe`), as stored
    in tests/snapshots/engine-describe.json: synthetic runs need no engine
    build (tests/mpi/test_engine_describe.py keeps the copy current)."""
    from mpiscope.engine.describe import parse

    return parse(json.loads((SNAPSHOTS / "engine-describe.json").read_text()))


def _rule_keys(bench, algo):
    """What the engine records of a series' sample rule (its --describe)."""
    b = engine_description().benchmarks[bench]
    timed = "member" if b.collective else \
        "responder" if bench == "overhead" and algo.startswith("or") else "initiator"
    return {"rule": b.rule, "unit": b.unit, "timed_role": timed}


class RunBuilder:
    """Accumulates blocks per (launch, rank) and writes a run directory."""

    def __init__(self, run_dir, nranks=2, sync="window", clocks=None, launches=(0,),
                 before_error_s=1.0, hosts=None, inject=None, schema=2):
        """`schema` 2 writes what today's engine writes (every series block names
        its sample rule, from `mpiscope-engine --describe`); 1, what the engine
        wrote before it named rules."""
        self.run_dir = Path(run_dir)
        self.schema = schema
        self.nranks = nranks
        self.sync = sync
        self.clocks = clocks or {}
        self.launches = tuple(launches)
        self.before_error_s = before_error_s
        self.hosts = hosts or {}
        self.inject = inject
        self.blocks = {(lk, r): [] for lk in self.launches for r in range(nranks)}
        self.expected = {}       # (bench, algo, size, launch) -> Expected
        self.nseries = 0

    def clock(self, launch, rank) -> Clock:
        if rank == 0:
            return ZERO
        c = self.clocks.get((launch, rank), self.clocks.get(rank, ZERO))
        return c

    def header(self, launch, rank):
        return {
            "schema_version": self.schema, "rank": rank, "size": self.nranks, "launch": launch,
            "host": self.hosts.get(rank, "node0"), "cpus": f"{rank % 2}",
            "mpi_library": MPI_LIBRARY, "mpi_version": "3.1",
            "timer": {"name": "tsc", "cost_s": 1.25e-08, "resolution_s": 4e-10,
                      "freq_hz": 2.5e9},
            "sync_method": self.sync, "cache": "warm", "seed": 7, "inject": self.inject,
            "argv": ["mpiscope-engine", "--plan", "plan.json"], "start_unix": 1.7e9,
        }

    def _sync_blocks(self, launch, rank):
        c = self.clock(launch, rank)
        before = Clock(c.offset_s + (self.before_error_s if rank else 0.0), c.drift, c.ref_s)
        after_meta = {"kind": "sync", "phase": "after", "model": c.model(),
                      "residual_s": 2.5e-8 if rank else 0.0,
                      "points": [[T0, c.offset_s, 1e-6]]}
        if self.inject is not None and rank:
            after_meta["recovery_error_s"] = {"start": 1e-8, "end": 2e-8}
        return ({"meta": {"kind": "sync", "phase": "before", "model": before.model(),
                          "residual_s": 5e-8 if rank else 0.0, "points": []}},
                {"meta": after_meta})

    def add(self, spec: SeriesSpec):
        for launch in spec.launches:
            base = T0 + LAUNCH_STRIDE * launch + SERIES_STRIDE * self.nseries
            self._add_series(spec, launch, base)
        self.nseries += 1
        return self

    def _rows(self, launch, rank, role, peer, spec, g_start, g_end, sched_g=()):
        n = len(g_start)
        c = self.clock(launch, rank)
        sched_g = np.asarray(sched_g, dtype=float)[:n]
        sched = c.to_local(sched_g) if self.sync == "window" else np.full(n, np.nan)
        valid = np.array([(rank, i) not in spec.late for i in range(n)], dtype=bool)
        meta = {"kind": "series", "bench": spec.bench, "algo": spec.algo, "size": spec.size,
                "reps": n, "stop": spec.stop,
                "window_s": 0.001 if self.sync == "window" else None,
                "role": role, "peer": peer,
                "window_msgs": spec.window_msgs if spec.bench in ("bw", "bibw", "pingpong_loop") else None,
                **_datatype_keys(spec.bench, spec.size), "root_rotate": False}
        if self.schema >= 2:
            meta.update(_rule_keys(spec.bench, spec.algo))
        if spec.start is not None:
            meta["start"] = spec.start
        return {"meta": meta, "t_start": c.to_local(np.asarray(g_start, dtype=float)),
                "t_end": c.to_local(np.asarray(g_end, dtype=float)),
                "t_sched": sched, "valid": valid}

    def _pair_list(self, spec):
        if spec.bench == "pairs":
            return list(spec.pairs)
        if spec.bench == "multipair":
            half = self.nranks // 2
            return [(p, p + half) for p in range(half)]
        return [(0, 1)]

    def _add_series(self, spec, launch, base):
        n = len(spec.values)
        S = base + PERIOD * np.arange(n)
        vals = np.asarray(spec.values, dtype=float)
        exp = self.expected.setdefault((spec.bench, spec.algo, spec.size, launch), Expected())
        rows = {}
        bench = spec.bench

        def ok(*ranks):
            return [all((r, i) not in spec.late for r in ranks) for i in range(n)]

        if bench in ("pingpong", "bw", "bibw", "empty", "pingpong_loop"):
            a, b = 0, 1
            if bench == "pingpong":
                dur = 2.0 * vals                      # values: half round trips
            elif bench == "empty":
                dur = vals                            # values: the interval itself
            elif bench == "pingpong_loop":
                dur = 2.0 * spec.window_msgs * vals   # values: half round trips of the loop
            else:
                nbytes = spec.size * spec.window_msgs * (2 if bench == "bibw" else 1)
                dur = nbytes / vals                   # values: bandwidth, B/s
            # The initiator's local duration is what counts: build it locally.
            ca = self.clock(launch, a)
            ls = ca.to_local(S)
            rows[a] = self._rows(launch, a, "initiator", b, spec, S, S, S)
            rows[a]["t_end"] = ls + dur
            rows[b] = self._rows(launch, b, "responder", a, spec, S + SMALL, S + SMALL * 2, S)
            for i, good in enumerate(ok(a, b)):
                exp.samples[(launch, i, f"{a}->{b}")] = (vals[i], good)
        elif bench == "oneway":
            a, b = 0, 1
            rows[a] = self._rows(launch, a, "initiator", b, spec, S, S + SMALL, S)
            rows[b] = self._rows(launch, b, "responder", a, spec, S, S + vals, S)
            for i, good in enumerate(ok(a, b)):
                exp.samples[(launch, i, f"{a}->{b}")] = (vals[i], good)
        elif bench in ("multipair", "pairs"):
            # values[i] = (forward, backward) one-way times of every pair.
            for k, (a, b) in enumerate(self._pair_list(spec)):
                fwd = np.array([v[0] for v in spec.values]) + k * 2.0 ** -30
                bwd = np.array([v[1] for v in spec.values]) + k * 2.0 ** -30
                b_end = S + fwd                 # b's receive completes
                b_start = b_end + SMALL         # b replies after its receive
                a_end = b_start + bwd
                rows[a] = self._rows(launch, a, "initiator", b, spec, S, a_end, S)
                rows[b] = self._rows(launch, b, "responder", a, spec, b_start, b_end, S)
                for i, good in enumerate(ok(a, b)):
                    exp.samples[(launch, i, f"{a}->{b}")] = (fwd[i], good)
                    exp.samples[(launch, i, f"{b}->{a}")] = (bwd[i], good)
        else:
            # Collective or ring: values[i] is the per-rep time; the last rank
            # finishes it, the others finish earlier. With barrier sync each
            # rank's duration is measured from its own start.
            last = self.nranks - 1
            for r in range(self.nranks):
                skew = SMALL * r                   # later ranks start later
                start = S + skew
                rows[r] = self._rows(launch, r, "member", -1, spec, start,
                                     S + vals - SMALL * (last - r), S)
                if self.sync != "window":
                    # Barrier sync uses local durations: build them locally.
                    rows[r]["t_end"] = rows[r]["t_start"] + (vals - SMALL * (last - r))
            for i, good in enumerate(ok(*range(self.nranks))):
                exp.samples[(launch, i, str(last))] = (vals[i], good)

        for r in range(self.nranks):
            if r in rows:
                self.blocks[(launch, r)].append(rows[r])
            else:
                idle = self._rows(launch, r, "idle", -1, spec, [], [])
                self.blocks[(launch, r)].append(idle)

    def write(self, crashed=(), cut_bytes=5):
        """Write every rank's file. Ranks in `crashed` ((launch, rank) pairs)
        leave a `.part` file without their last series' trailer and without
        the final sync block."""
        for (launch, rank), series in self.blocks.items():
            before, after = self._sync_blocks(launch, rank)
            path = self.run_dir / "raw" / f"launch-{launch}" / f"rank-{rank}.raw"
            if (launch, rank) in crashed:
                write_raw(path.with_name(path.name + ".part"), self.header(launch, rank),
                          [before, *series], cut_last=cut_bytes, version=self.schema)
            else:
                write_raw(path, self.header(launch, rank), [before, *series, after],
                          version=self.schema)
        return self.run_dir


def context_for(run_id="20240101-000000-abcd", status="completed", benches=(), **extra):
    """A context dict as the runner writes it into context.json."""
    ctx = {"schema_version": 1, "run_id": run_id, "created": "2024-01-01T00:00:00+00:00",
           "status": status, "error": None, "command": ["mpiscope", "run"],
           "mpi": "openmpi", "np": 2, "benches": list(benches), "sizes": [],
           "launches": 1, "seed": 7, "git_sha": "0123456789abcdef"}
    ctx.update(extra)
    return ctx


# ---------------------------------------------------------------- a demo run

DEMO_RUN_ID = "20240315-101500-a1b2"


def build_demo_run(out_root, run_id=DEMO_RUN_ID, created="2024-03-15T10:15:00+00:00"):
    """A 4-rank run with one series of most benchmark kinds, ingested, with
    context.json written as the runner would. Values are chosen away from
    rounding boundaries so the text outputs are stable. Returns the run dir."""
    from mpiscope.store.ingest import ingest

    run_dir = Path(out_root) / run_id
    rb = RunBuilder(run_dir, nranks=4,
                    clocks={1: Clock(0.5, 2.0 ** -12, 100.0), 2: Clock(-0.25),
                            3: Clock(1.0, -2.0 ** -14, 90.0)})
    us = 1e-6
    rb.add(SeriesSpec("pingpong", 0, [0.19 * us, 0.18 * us, 0.21 * us, 0.22 * us, 0.2 * us]))
    rb.add(SeriesSpec("pingpong", 8, [0.21 * us, 0.19 * us, 0.23 * us, 0.24 * us, 0.2 * us],
                      late=((0, 4),)))
    rb.add(SeriesSpec("pingpong", 4194304, [412.3 * us, 415.1 * us, 409.9 * us, 420.3 * us]))
    rb.add(SeriesSpec("bw", 8, [30.1e6, 29.7e6, 31.2e6]))
    rb.add(SeriesSpec("bw", 1048576, [10.8e9, 10.6e9, 10.9e9, 11.1e9]))
    rb.add(SeriesSpec("bibw", 1048576, [12.2e9, 12.7e9, 12.1e9], window_msgs=32))
    rb.add(SeriesSpec("oneway", 8, [0.41 * us, 0.43 * us, 0.39 * us]))
    rb.add(SeriesSpec("multipair", 64, [(0.51 * us, 0.53 * us), (0.49 * us, 0.55 * us)]))
    rb.add(SeriesSpec("ring", 8, [1.31 * us, 1.27 * us, 1.36 * us], stop="reps_max"))
    rb.add(SeriesSpec("allreduce", 4, [1.62 * us, 1.58 * us, 1.73 * us, 1.66 * us]))
    rb.add(SeriesSpec("allreduce", 1024, [3.12 * us, 3.33 * us, 3.21 * us],
                      stop="time_budget"))
    rb.add(SeriesSpec("barrier", 0, [0.92 * us, 0.88 * us, 0.97 * us]))
    rb.add(SeriesSpec("bcast", 8, [0.71 * us, 0.77 * us, 0.75 * us], late=((2, 1),)))
    rb.write()
    context = context_for(
        run_id=run_id, created=created, np=4,
        benches=["pingpong", "bw", "bibw", "oneway", "multipair", "ring", "allreduce",
                 "barrier", "bcast"],
        sizes=[0, 4, 8, 64, 1024, 1048576, 4194304])
    (run_dir / "context.json").write_text(json.dumps(context, indent=2))
    ingest(run_dir, context)
    rb.context = context
    return run_dir, rb
