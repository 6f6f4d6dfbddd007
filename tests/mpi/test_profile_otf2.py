# SPDX-License-Identifier: BSD-3-Clause
"""A traced profile of native/pmpi/tests/known_traffic.c exported as OTF2 (mpiscope
export RUN --format otf2) and read back with otf2.reader: one location per
rank, every counted point-to-point message once as MpiSend at its sender
and once as MpiRecv at its receiver (exact counts per rank and peer, equal
to the profile's peer matrix), collectives with their operation, and each
location's timestamps in order. Untraced and measurement runs are refused."""

from collections import Counter

import otf2

from runcli import mpiscope
from known_traffic import COLLECTIVES, NP


def _read(archive):
    """Per location (rank): its events in order; and the archive's communicators' world ranks."""
    events = {}
    with otf2.reader.open(str(archive)) as trace:
        ranks = {loc: int(loc.group.name.split()[-1]) for loc in trace.definitions.locations}
        for loc, ev in trace.events:
            events.setdefault(ranks[loc], []).append(ev)
        comm_ranks = {c.name: [ranks[m] for m in c.group.members] for c in trace.definitions.comms}
    return events, comm_ranks


def test_profile_otf2_export_matches_the_counters(traced, tmp_path):
    out, run_dir, prof = traced
    target = tmp_path / "vampir"
    p = mpiscope("export", run_dir.name, "--out", out, "--format", "otf2", "-o", target)
    assert p.returncode == 0, p.stderr
    events, comm_ranks = _read(target / "traces.otf2")
    assert sorted(events) == list(range(NP))
    assert comm_ranks["MPI_COMM_WORLD"] == list(range(NP))
    assert comm_ranks["communicator of ranks 0,1"] == [0, 1]  # the halves of known_traffic.c
    sent, received, colls = Counter(), Counter(), Counter()
    for r, evs in events.items():
        times = [e.time for e in evs]
        assert times == sorted(times), f"rank {r}: timestamps go back"
        depth = 0
        for e in evs:
            depth += isinstance(e, otf2.events.Enter) - isinstance(e, otf2.events.Leave)
            assert depth in (0, 1)
            if isinstance(e, otf2.events.MpiSend):
                sent[(r, e.communicator.group.members[e.receiver].group.name, e.msg_length)] += 1
            elif isinstance(e, otf2.events.MpiRecv):
                received[(r, e.communicator.group.members[e.sender].group.name, e.msg_length)] += 1
            elif isinstance(e, otf2.events.MpiCollectiveEnd):
                op = str(e.collective_op).split(".")[-1]
                colls[(r, op)] += 1
                if op in ("BCAST", "REDUCE", "GATHER", "SCATTER"):  # every root is rank 0 in known_traffic.c
                    assert e.root == 0, (r, op)
        assert depth == 0
    peers = prof.peers
    for direction, counted in (("sent", sent), ("recv", received)):
        mine = peers[peers["direction"] == direction]
        want_msgs = Counter({(int(r), int(q)): int(m) for r, q, m in zip(mine["rank"], mine["peer"], mine["msgs"])})
        want_bytes = Counter({(int(r), int(q)): int(b) for r, q, b in zip(mine["rank"], mine["peer"], mine["bytes"])})
        msgs, nbytes = Counter(), Counter()
        for (r, peer, size), n in counted.items():
            msgs[(r, int(peer.split()[-1]))] += n
            nbytes[(r, int(peer.split()[-1]))] += size * n
        assert msgs == want_msgs, direction
        assert +nbytes == +want_bytes, direction
    want_colls = Counter()
    for call, per_rank in COLLECTIVES.items():  # the same on every rank
        name = call.removeprefix("MPI_").upper()
        want_colls[name[1:] if name in ("IALLREDUCE", "IBARRIER") else name] += len(per_rank)
    for r in range(NP):
        assert Counter({op: n for (q, op), n in colls.items() if q == r}) == want_colls, r


def test_otf2_export_refuses_untraced_profiles_and_measurements(untraced, tmp_path):
    out, run_dir = untraced
    target = tmp_path / "x"
    p = mpiscope("export", run_dir.name, "--out", out, "--format", "otf2", "-o", target)
    assert p.returncode == 2 and "--trace" in p.stderr
    assert not target.exists() and not list(tmp_path.glob(".x.*"))
    p = mpiscope("export", run_dir.name, "--out", out, "--format", "otf2")
    assert p.returncode == 2 and "-o DIR" in p.stderr
