# SPDX-License-Identifier: BSD-3-Clause
"""A traced profile run as the per-rank pattern the what-if replicates
(sim/replicate.py): each rank's point-to-point operations (read as
profile/sim_events.py says) and blocking collective calls, in posting order,
with the gaps between them as computations (sim/from_trace.trace_nodes);
other calls' time lies in the gaps. Also what the trace measured: a rank's
time in communication runs from the run's first traced call to the end of its
own last operation, less the computations its schedule charges it; the run's
is the mean over ranks, what the simulated schedules are compared on."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mpiscope.common.errors import UsageError
from mpiscope.models.costmodels import ALGORITHMS
from mpiscope.profile import files, summary
from mpiscope.profile.sim_events import profile_events
from mpiscope.profile.weights import collective_name
from mpiscope.sim.from_trace import trace_nodes
from mpiscope.sim.replicate import Call, Pattern, offset
from mpiscope.common.inputs import read_parquet


@dataclass
class Traced:
    run_id: str
    pattern: Pattern
    comm_s: np.ndarray  # per rank: its time in communication, as measured
    calls: dict  # MPI call -> per-rank mean of its traced time (collective calls only)
    context: dict = field(default_factory=dict)  # the run's context.json: its library, hosts, launch


def _collectives(prof, comms):
    """Per rank: [(t_start, t_end, Call)] of its blocking collective calls."""
    family = dict(zip(prof.cells["call"], prof.cells["family"]))
    t = prof.trace
    t = t[t["call"].map(family) == "coll"]
    world = comms.setdefault(tuple(range(prof.np)), len(comms))
    out = {}
    for r, call, c, q, nbytes, root, t0, t1 in zip(
        t["rank"], t["call"], t["comm"], t["comm_size"], t["bytes"], t["peer"], t["t_start"], t["t_end"]
    ):
        name, blocking = collective_name(call)
        if not blocking:
            continue
        known = c >= 0 or q == prof.np
        bench = name if name in ALGORITHMS and known else None
        comm = int(c) if c >= 0 else world
        out.setdefault(int(r), []).append(
            (float(t0), float(t1), Call(call, bench, comm, int(nbytes), max(int(root), 0), float(t1 - t0)))
        )
    return out


def traced_pattern(run_dir) -> Traced:
    """The pattern of the traced profile run in `run_dir` (UsageError without a trace)."""
    prof = summary.load(run_dir)
    events, p = profile_events(prof)
    comms = {}  # members -> the trace's index of the communicator
    path = Path(run_dir) / files.COMMS
    if path.exists():
        table = read_parquet(path, "the trace's communicators", "profile the application again")
        comms.update({tuple(int(x) for x in m): int(c) for c, m in zip(table["comm"], table["members"])})
    colls = _collectives(prof, comms)
    # A trace of collectives alone has no point-to-point events, and its table no columns.
    ev = {
        k: events[k].to_pylist() if k in events.column_names else []
        for k in ("rank", "op", "peer", "bytes", "t_post", "t_done")
    }
    items = {r: [] for r in range(p)}
    for r, op, peer, nbytes, t0, t1 in zip(*ev.values()):
        items[r].append((t0, t1, (op, (offset(r, peer, p), int(nbytes)))))
    for r, cs in colls.items():
        items[r] += [(t0, t1, ("coll", call)) for t0, t1, call in cs]
    origin = min((t0 for its in items.values() for t0, _, _ in its), default=None)
    if origin is None:
        raise UsageError(
            f"profile run {Path(run_dir).name}: its trace holds no sends, receives or blocking collectives to replicate"
        )
    nodes, compute, comm_s, calls = [], [], np.zeros(p), {}
    for r in range(p):
        its = sorted(items[r], key=lambda x: x[0])  # stable: a Sendrecv's send before its receive
        rank_nodes = []
        for kind, v, reqs in trace_nodes([(t0, t1) for t0, t1, _ in its], origin):
            rank_nodes.append(("calc", v, reqs) if kind == "calc" else (*its[v][2], reqs))
        nodes.append(rank_nodes)
        compute.append(sum(v for k, v, _ in rank_nodes if k == "calc"))
        comm_s[r] = (max((t1 for _, t1, _ in its), default=origin) - origin) - compute[-1]
        for _, _, (kind, call) in its:
            if kind == "coll":
                calls[call.name] = calls.get(call.name, 0.0) + call.seconds / p
    members = [m for m, _ in sorted(comms.items(), key=lambda x: x[1])]
    pattern = Pattern(p, members, nodes, compute)
    return Traced(prof.context.get("run_id", str(run_dir)), pattern, comm_s, calls, prof.context)
