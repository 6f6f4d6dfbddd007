# SPDX-License-Identifier: BSD-3-Clause
"""A traced run's per-rank pattern replicated to p' ranks, as a binary
schedule (gbin.c's format) whose collectives are our own algorithms: rank r'
follows traced rank r' mod p, a point-to-point partner keeps its distance in
rank order, a collective keeps its size and members (shifted by whole
blocks of p), runs as the algorithm `choose` names (or as its traced time
where none), and gets tags of its own; computations keep their lengths.
Method: docs/explanation/simulator.md, "Replication to p′ ranks"."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mpiscope.common.errors import UsageError
from mpiscope.sim import binary
from mpiscope.common.inputs import SCHEDULE_LIMIT, read_bytes

OP = np.dtype([("type", "u1"), ("pad", "V3"), ("peer", "<i4"), ("tag", "<i4"), ("ndeps", "<u4"), ("value", "<f8")])
MAGIC = b"MPSIMSC1"
SEND, RECV, CALC = 0, 1, 2
TAGS_PER_CALL = 1024  # distinct tags one algorithm instance may use
TAG_SPACE = 65535  # the simulator's tags: 0 (point-to-point) and 1..65535


@dataclass(frozen=True)
class Call:
    """A collective call of the pattern."""

    name: str  # the MPI call
    bench: str | None  # our collective of the same operation (None: none of ours)
    comm: int  # index into Pattern.comms
    size: int  # bytes, the engine's size
    root: int  # the root's rank in the communicator (0 without one)
    seconds: float  # its traced time on this rank


@dataclass
class Pattern:
    p: int
    comms: list  # members of each communicator, world ranks in communicator order
    nodes: list  # per traced rank: [(kind, value, requires)]; kind calc (seconds),
    # send / recv ((offset, bytes)), coll (Call)
    compute_s: list  # per traced rank: the sum of its computations


def offset(r: int, q: int, p: int) -> int:
    """The distance from rank r to its partner q, both ends agreeing (see above)."""
    d = (q - r) % p
    if 2 * d == p:
        return d if r < q else -d
    return d if 2 * d < p else d - p


def read_binary(path) -> list:
    """[(ops, deps)] per rank of a binary schedule (ops: OP records; deps: flat, in op order)."""
    data = read_bytes(path, SCHEDULE_LIMIT, "schedule")
    if data[:8] != MAGIC:
        raise ValueError(f"{path}: not a binary schedule")
    nranks, at = int(np.frombuffer(data, "<u8", 1, 8)[0]), 16
    out = []
    for _ in range(nranks):
        _, nops, ndeps = (int(x) for x in np.frombuffer(data, "<u4", 3, at))
        at += 12
        ops = np.frombuffer(data, OP, nops, at).copy()
        at += nops * OP.itemsize
        out.append((ops, np.frombuffer(data, "<u4", ndeps, at).astype(np.int64)))
        at += 4 * ndeps
    return out


class Algorithms:
    """Our algorithms' schedules, generated once per (bench, algo, ranks, size)."""

    def __init__(self, segment: int):
        self.segment, self._cache = segment, {}

    def rank_ops(self, bench, algo, q, size, root, local):
        key = (bench, algo, q, size)
        if key not in self._cache:
            with tempfile.TemporaryDirectory(prefix="mpiscope-whatif-") as tmp:
                path = Path(tmp) / "coll.bin"
                binary.schedule(
                    [
                        "--bench",
                        bench,
                        "--algo",
                        algo,
                        "-p",
                        q,
                        "--size",
                        size,
                        "--segment",
                        self.segment,
                        "--format",
                        "bin",
                        "-o",
                        path,
                    ]
                )
                ranks = read_binary(path)
            tags = np.unique(np.concatenate([o["tag"][o["type"] <= RECV] for o, _ in ranks] + [[0]]))
            if len(tags) > TAGS_PER_CALL:
                raise UsageError(
                    f"{bench}/{algo} on {q} ranks uses {len(tags)} tags; the what-if gives a call {TAGS_PER_CALL}"
                )
            self._cache[key] = (ranks, tags)
        ranks, tags = self._cache[key]
        ops, deps = ranks[(local - root) % q]  # our schedules have root 0: rotate
        return ops, deps, tags


class _Rank:
    """One rank's operations and (operation, required operation) pairs being built."""

    def __init__(self):
        self.ops, self.n = [np.zeros(0, OP)], 0
        self.pair_op, self.pair_dep = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]

    def add(self, ops, pairs_op, pairs_dep) -> int:
        base = self.n
        self.ops.append(ops)
        self.pair_op.append(np.asarray(pairs_op, np.int64))
        self.pair_dep.append(np.asarray(pairs_dep, np.int64))
        self.n += len(ops)
        return base

    def calc(self, seconds, requires) -> int:
        op = np.zeros(1, OP)
        op["type"], op["peer"], op["value"] = CALC, -1, seconds
        return self.add(op, [self.n] * len(requires), list(requires))

    def write(self, f, rank):
        ops = np.concatenate(self.ops)
        po, pd = np.concatenate(self.pair_op), np.concatenate(self.pair_dep)
        order = np.argsort(po, kind="stable")
        ops["ndeps"] = np.bincount(po, minlength=len(ops))
        f.write(np.array([rank, len(ops), len(po)], "<u4").tobytes())
        f.write(ops.tobytes())
        f.write(pd[order].astype("<u4").tobytes())


def _segments(nodes):
    """The pattern rank's runs of calc/send/recv nodes as arrays, and its
    collective nodes: [(first node, ops, pairs (node, required node) or None for a call)]."""
    out, run = [], []

    def close():
        if run:
            ops = np.zeros(len(run), OP)
            first = run[0][0]
            ops["type"] = [{"calc": CALC, "send": SEND, "recv": RECV}[k] for _, k, _, _ in run]
            ops["value"] = [v if k == "calc" else v[1] for _, k, v, _ in run]
            offs = np.array([v[0] if k != "calc" else 0 for _, k, v, _ in run])
            po = [n for n, _, _, reqs in run for _ in reqs]
            pd = [q for _, _, _, reqs in run for q in reqs]
            out.append((first, (ops, offs, np.array(po, np.int64), np.array(pd, np.int64))))
            run.clear()

    for n, (kind, value, reqs) in enumerate(nodes):
        if kind == "coll":
            close()
            out.append((n, (value, reqs)))
        else:
            run.append((n, kind, value, reqs))
    close()
    return out


def estimate_ops(pattern: Pattern, p_new: int, choose, per_rank) -> int:
    """About how many operations the schedule on p_new ranks holds: every
    rank as its traced counterpart in the first block, a collective call as
    `per_rank(bench, algo, ranks, size)` operations (the most of a few ranks)
    and two joins."""
    total = 0
    for nodes in pattern.nodes:
        n = 0
        for kind, value, _ in nodes:
            if kind != "coll":
                n += 1
                continue
            q = p_new if len(pattern.comms[value.comm]) == pattern.p else len(pattern.comms[value.comm])
            algo = choose(value.bench, q, value.size) if value.bench else None
            n += 1 if algo is None else per_rank(value.bench, algo, q, value.size) + 2
        total += n * (p_new // pattern.p)
    return total


def write_schedule(pattern: Pattern, p_new: int, choose, algorithms: Algorithms, path, max_ops: int) -> dict:
    """Writes the schedule of `pattern` on p_new ranks to `path`; `choose(bench,
    ranks, size)` names our algorithm for a collective call (None: its traced
    time stands). Returns {"nops", "kept_s": per rank, the traced time of the
    calls that stand as computations}."""
    p = pattern.p
    if p_new % p:
        raise UsageError(f"-p {p_new}: the traced run has {p} ranks; give multiples of {p}")
    segs = [_segments(n) for n in pattern.nodes]
    members = {}  # (comm, block) -> np.array of members at p_new

    def members_of(c, block):
        m = pattern.comms[c]
        if len(m) == p:
            key = (c, -1)
            if key not in members:
                members[key] = (np.arange(p_new) // p) * p + np.asarray(m)[np.arange(p_new) % p]
            return members[key]
        key = (c, block)
        if key not in members:
            members[key] = np.asarray(m) + block * p
        return members[key]

    nops, kept = 0, np.zeros(p_new)
    with open(path, "wb") as f:
        f.write(MAGIC + np.array([p_new], "<u8").tobytes())
        for rank in range(p_new):
            r, block = rank % p, rank // p
            node_op = np.zeros(len(pattern.nodes[r]), np.int64)
            counts = {}  # collective calls on each communicator so far
            out = _Rank()
            for first, seg in segs[r]:
                if isinstance(seg[0], Call):
                    call, reqs = seg
                    node_op[first] = _collective(
                        out,
                        call,
                        node_op[reqs],
                        members_of(call.comm, block),
                        rank,
                        counts,
                        len(pattern.comms),
                        choose,
                        algorithms,
                        kept,
                    )
                    continue
                ops, offs, po, pd = seg
                ops = ops.copy()
                send = ops["type"] != CALC
                ops["peer"] = np.where(send, (rank + offs) % p_new, -1)
                node_op[first : first + len(ops)] = out.n + np.arange(len(ops))
                out.add(ops, node_op[po], node_op[pd])
            nops += out.n
            if nops > max_ops:
                raise UsageError(f"the schedule on {p_new} ranks passes {max_ops} operations: give fewer ranks")
            out.write(f, rank)
    return {"nops": nops, "kept_s": kept}


def _collective(out, call, requires, members, rank, counts, ncomms, choose, algorithms, kept) -> int:
    """Adds one collective call to rank's operations; returns the node standing for its completion."""
    algo = choose(call.bench, len(members), call.size) if call.bench else None
    j = counts.get(call.comm, 0)
    counts[call.comm] = j + 1
    if algo is None:
        kept[rank] += call.seconds
        return out.calc(call.seconds, requires)
    local = int(np.flatnonzero(members == rank)[0])
    ops, deps, tags = algorithms.rank_ops(call.bench, algo, len(members), call.size, call.root, local)
    start = out.calc(0.0, requires)
    ops = ops.copy()
    msg = ops["type"] <= RECV
    q = len(members)
    ops["peer"][msg] = members[(ops["peer"][msg] + call.root) % q]
    serial = j * ncomms + call.comm
    ops["tag"][msg] = 1 + (serial * TAGS_PER_CALL + np.searchsorted(tags, ops["tag"][msg])) % TAG_SPACE
    base = out.n
    own = np.repeat(np.arange(len(ops)), ops["ndeps"].astype(np.int64))
    roots = np.flatnonzero(ops["ndeps"] == 0)
    out.add(ops, np.concatenate([base + own, base + roots]), np.concatenate([base + deps, np.full(len(roots), start)]))
    return out.calc(0.0, [start, *range(base, base + len(ops))])
