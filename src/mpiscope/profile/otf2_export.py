# SPDX-License-Identifier: BSD-3-Clause
"""A traced profile run as an OTF2 archive for Vampir and other OTF2 readers
(`mpiscope export RUN --format otf2 -o DIR`), written with the `otf2` package.

One location per rank, one region per MPI call; per traced call an Enter and a
Leave on rank 0's clock (ns) and inside them MpiSend at the start (receiver,
bytes), MpiRecv at the end (sender, bytes) or MpiCollectiveBegin/End (operation,
root, the bytes the profile counts). What the trace lacks: tags are 0; a
nonblocking receive's MpiRecv is inside the call that posted it; one-sided calls
and waits are regions only; communicators with the same ranks in the same order
are one OTF2 communicator."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import otf2

from mpiscope.common.errors import UsageError
from mpiscope.profile import files
from mpiscope.profile.summary import Profile
from mpiscope.common.inputs import read_parquet

ARCHIVE = "traces"  # DIR/traces.otf2, DIR/traces.def, DIR/traces/
NO_ROOT = otf2.Undefined.UINT32.value  # OTF2's "undefined" for a collective without a root

# Calls that hold a message sent to / received from `peer`.
SEND_CALLS = {
    "MPI_Send",
    "MPI_Bsend",
    "MPI_Ssend",
    "MPI_Rsend",
    "MPI_Isend",
    "MPI_Ibsend",
    "MPI_Issend",
    "MPI_Irsend",
    "MPI_Start",
    "MPI_Startall",
    "MPI_Sendrecv",
    "MPI_Sendrecv_replace",
}
RECV_CALLS = {"MPI_Recv", "MPI_Irecv", "MPI_Recv_init", "MPI_Sendrecv_received"}
ROOTED = {
    "MPI_Bcast",
    "MPI_Ibcast",
    "MPI_Reduce",
    "MPI_Ireduce",
    "MPI_Gather",
    "MPI_Igather",
    "MPI_Gatherv",
    "MPI_Scatter",
    "MPI_Iscatter",
    "MPI_Scatterv",
}
# Whose bytes a collective's count is: the root's buffer it sends out, the block each rank sends in.
SENDS_OUT = {"BCAST", "SCATTER", "SCATTERV"}
SENDS_IN = {"REDUCE", "GATHER", "GATHERV"}


def collective_name(call: str):
    """The otf2.CollectiveOp name of MPI_<Name> (its non-blocking form included), or None."""
    name = call.removeprefix("MPI_").upper()
    if name.startswith("I") and not hasattr(otf2.CollectiveOp, name):
        name = name[1:]
    return name if hasattr(otf2.CollectiveOp, name) else None


def _region(defs, regions, call):
    if call not in regions:
        op = collective_name(call)
        role = (
            otf2.RegionRole.POINT2POINT
            if call in SEND_CALLS | RECV_CALLS
            else otf2.RegionRole.FUNCTION
            if op is None
            else otf2.RegionRole.BARRIER
            if op == "BARRIER"
            else otf2.RegionRole.COLL_OTHER
        )
        regions[call] = defs.region(call, canonical_name=call, region_role=role, paradigm=otf2.Paradigm.MPI)
    return regions[call]


def _ns(seconds, origin):
    return int(round((seconds - origin) * 1e9))


def write_archive(run_dir: Path, prof: Profile, target: Path) -> dict:
    """Writes the archive into directory `target` (made whole in a temporary
    directory beside it, then renamed). Returns counts of what was written."""
    if prof.context.get("kind") != files.KIND:
        raise UsageError(
            f"run {prof.context.get('run_id')} is a measurement, not a profile: OTF2 export "
            "is for `mpiscope profile --trace -- …` runs"
        )
    t = prof.trace
    comms_path = Path(run_dir) / files.COMMS
    if t is None or t.empty or not comms_path.exists():
        raise UsageError(
            f"profile run {prof.context.get('run_id')} has no trace: profile the application "
            "again with `mpiscope profile --trace -- …`"
        )
    if target.exists():
        raise UsageError(f"cannot write {target}: it exists; give a new directory name")
    if not target.parent.is_dir():
        raise UsageError(f"cannot write {target}: directory {target.parent} does not exist")
    comms = read_parquet(comms_path, hint="profile the application again").to_pandas()
    comm_members = [list(m) for m in comms.sort_values("comm")["members"]]
    np_ = prof.np
    node_of = prof.context.get("node_of") or [0] * np_
    origin = float(t["t_start"].min())
    counts: dict = {
        "events": 0,
        "sends": 0,
        "recvs": 0,
        "collectives": 0,
        "dropped": {
            r: v["trace"]["dropped"]
            for r, v in (prof.context.get("ranks") or {}).items()
            if v.get("trace", {}).get("dropped")
        },
    }

    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        with otf2.writer.open(str(tmp), ARCHIVE, timer_resolution=1_000_000_000) as trace:
            defs = trace.definitions
            machine = defs.system_tree_node("machine")
            nodes = {n: defs.system_tree_node(f"node {n}", parent=machine) for n in sorted(set(node_of))}
            locations = []
            for r in range(np_):
                group = defs.location_group(f"rank {r}", system_tree_parent=nodes[node_of[r]])
                locations.append(defs.location("main thread", group=group))
            everyone = defs.group(
                "MPI_COMM_WORLD locations",
                group_type=otf2.GroupType.COMM_LOCATIONS,
                paradigm=otf2.Paradigm.MPI,
                members=locations,
            )
            world = list(range(np_))
            comms = {}

            def comm(index):
                """(OTF2 Comm, its world ranks) of the trace's communicator `index` (-1: MPI_COMM_WORLD)."""
                members = comm_members[index] if 0 <= index < len(comm_members) else world
                key = tuple(members)
                if key not in comms:
                    name = "MPI_COMM_WORLD" if members == world else f"communicator of ranks {_ranks(members)}"
                    g = (
                        everyone
                        if members == world
                        else defs.group(
                            f"{name} group",
                            group_type=otf2.GroupType.COMM_GROUP,
                            paradigm=otf2.Paradigm.MPI,
                            members=[locations[w] for w in members],
                        )
                    )
                    comms[key] = (defs.comm(name, group=g), {w: i for i, w in enumerate(members)})
                return comms[key]

            regions = {}
            for r, mine in t.sort_values(["rank", "t_start", "t_end"], kind="stable").groupby("rank"):
                w = trace.event_writer_from_location(locations[int(r)])
                last = 0
                for call, peer, nbytes, ci, t0, t1 in zip(
                    mine["call"], mine["peer"], mine["bytes"], mine["comm"], mine["t_start"], mine["t_end"]
                ):
                    # Clamped to keep each location's time monotone (threads may overlap calls).
                    start = max(_ns(t0, origin), last)
                    end = last = max(_ns(t1, origin), start)
                    region = _region(defs, regions, call)
                    c, rank_in = comm(int(ci))
                    peer = int(peer)
                    w.enter(start, region)
                    op = collective_name(call)
                    if call in SEND_CALLS and peer in rank_in:
                        w.mpi_send(start, rank_in[peer], c, 0, int(nbytes))
                        counts["sends"] += 1
                    elif call in RECV_CALLS and peer in rank_in:
                        w.mpi_recv(end, rank_in[peer], c, 0, int(nbytes))
                        counts["recvs"] += 1
                    elif op is not None:
                        root = rank_in.get(peer, NO_ROOT) if call in ROOTED else NO_ROOT
                        sent, received = _coll_bytes(op, int(nbytes), peer == int(r), call in ROOTED)
                        w.mpi_collective_begin(start)
                        w.mpi_collective_end(end, getattr(otf2.CollectiveOp, op), c, root, sent, received)
                        counts["collectives"] += 1
                    w.leave(end, region)
                    counts["events"] += 1
        tmp.rename(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return counts


def _coll_bytes(op: str, nbytes: int, is_root: bool, rooted: bool):
    """(sent, received) bytes of one rank in a collective whose profiled size is `nbytes`."""
    if rooted and op in SENDS_OUT:
        return (nbytes, 0) if is_root else (0, nbytes)
    if rooted and op in SENDS_IN:
        return (0, nbytes) if is_root else (nbytes, 0)
    return nbytes, nbytes


def _ranks(members):
    return ",".join(map(str, members)) if len(members) <= 8 else f"{members[0]},{members[1]},…({len(members)})"
