# SPDX-License-Identifier: BSD-3-Clause
"""A traced profile run (`mpiscope profile --trace`) as the events the simulator's
trace-to-schedule writer reads (sim/from_trace.py): each rank's point-to-point
sends and receives in posting order. What the trace lacks is stated, not guessed:
a nonblocking operation completes at the end of the rank's next Wait*/Test*
call; sends to a rank that none of its recorded receives match (in MPI's
non-overtaking order) are its Sendrecvs' receives, in send order; tags are all
0; a persistent receive is posted at its MPI_Recv_init; collectives, one-sided
and other calls are not operations: their time lies in the gaps (calc)."""

from __future__ import annotations

from collections import defaultdict

import pyarrow as pa

from mpiscope.common.errors import UsageError
from mpiscope.profile.files import TRACE
from mpiscope.profile.summary import Profile

COMPLETIONS = {
    "MPI_Wait",
    "MPI_Waitall",
    "MPI_Waitany",
    "MPI_Waitsome",
    "MPI_Test",
    "MPI_Testall",
    "MPI_Testany",
    "MPI_Testsome",
}
BLOCKING = {
    "MPI_Send",
    "MPI_Bsend",
    "MPI_Ssend",
    "MPI_Rsend",
    "MPI_Recv",
    "MPI_Sendrecv",
    "MPI_Sendrecv_replace",
    "MPI_Sendrecv_received",
}  # the last: what a Sendrecv received
SENDRECV = {"MPI_Sendrecv", "MPI_Sendrecv_replace"}


def _completion(ends, t_start):
    """End of the first completion call starting at or after t_start (ends: sorted (start, end))."""
    for s, e in ends:
        if s >= t_start:
            return e
    return None


def profile_events(prof: Profile) -> tuple[pa.Table, int]:
    """(events table with rank, seq, op, peer, tag, bytes, t_post, t_done; number of ranks)."""
    t = prof.trace
    if t is None or t.empty:
        raise UsageError("this profile run has no trace: profile the application with `mpiscope profile --trace`")
    lost = {
        r: v["trace"]["dropped"] for r, v in prof.context.get("ranks", {}).items() if v.get("trace", {}).get("dropped")
    }
    if lost:
        raise UsageError(
            f"the trace dropped events on ranks {sorted(lost)} (its buffer was full): "
            "profile again with a larger --trace N"
        )
    family = dict(zip(prof.cells["call"], prof.cells["family"]))
    t = t.sort_values(["rank", "t_start"], kind="stable")
    ops = []  # (rank, op, peer, bytes, t_post, t_done)
    sendrecvs = defaultdict(list)  # rank: its Sendrecv rows (t_post, t_done)
    for r, mine in t.groupby("rank"):
        ends = [(s, e) for c, s, e in zip(mine["call"], mine["t_start"], mine["t_end"]) if c in COMPLETIONS]
        for call, peer, nbytes, t0, t1 in zip(
            mine["call"], mine["peer"], mine["bytes"], mine["t_start"], mine["t_end"]
        ):
            kind = family.get(call)
            if peer < 0 or kind not in ("send", "recv"):
                continue
            done = t1 if call in BLOCKING else (_completion(ends, t1) or t1)
            ops.append((int(r), kind, int(peer), int(nbytes), float(t0), float(done)))
            if call in SENDRECV:
                sendrecvs[int(r)].append((float(t0), float(t1)))
    # Sendrecv receives: the messages to a rank its recorded receives leave unmatched.
    sent, got = defaultdict(list), defaultdict(list)
    for r, kind, peer, nbytes, t0, _ in ops:
        if kind == "send":
            sent[(r, peer)].append((t0, nbytes))
        else:
            got[(peer, r)].append(nbytes)
    left: defaultdict = defaultdict(list)
    for (src, dst), msgs in sent.items():
        recorded = got[(src, dst)]
        k = 0
        for t0, nbytes in msgs:  # in order; a send its next recorded receive does not take is a Sendrecv's
            if k < len(recorded) and recorded[k] == nbytes:
                k += 1
            else:
                left[dst].append((t0, src, nbytes))
    for dst, msgs in left.items():
        calls = sorted(sendrecvs.get(dst, []))
        if len(msgs) > len(calls):
            raise UsageError(
                f"the trace of run {prof.context.get('run_id')} ({TRACE}) is incomplete: rank "
                f"{dst}: {len(msgs)} messages sent to it have no receive in it (it has {len(calls)} "
                "Sendrecv calls)"
            )
        for (_, src, nbytes), (t0, t1) in zip(sorted(msgs), calls):
            ops.append((dst, "recv", src, nbytes, t0, t1))
    ops.sort(key=lambda o: (o[0], o[4], o[1] != "send"))  # a Sendrecv's send before its receive
    seq = defaultdict(int)
    cols = defaultdict(list)
    for r, kind, peer, nbytes, t0, t1 in ops:
        for col, v in zip(
            ("rank", "seq", "op", "peer", "tag", "bytes", "t_post", "t_done"),
            (r, seq[r], kind, peer, 0, nbytes, t0, t1),
        ):
            cols[col].append(v)
        seq[r] += 1
    return pa.table(dict(cols)), prof.np
