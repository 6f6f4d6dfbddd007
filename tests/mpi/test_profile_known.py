# SPDX-License-Identifier: BSD-3-Clause
"""mpiscope profile on a program whose traffic is known exactly
(native/pmpi/tests/known_traffic.c): every count, byte, peer and channel the
profile stores is checked against the expectation computed here, with Open
MPI and with MPICH; Open MPI's own monitoring matrix (--library-view) against
ours; a rank that dies loses only its own profile."""

import json
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import jsonschema
import numpy as np
import pytest

from mpiscope.engine.mpi import find_mpi
from mpiscope.profile import summary
from mpiscope.profile.build import ensure_library
from known_traffic import COLLECTIVES, NP, launch, profile_ok, program_path
from runcli import mpiscope

SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"


def expected(r, p, node_of):
    """(call, peer, bytes) of every message rank r sends and receives (known_traffic.c)."""
    partner, right, left = r ^ 1, (r + 1) % p, (r - 1) % p
    others = [q for q in range(p) if q != r]
    sends = ([("MPI_Send", partner, 1000)] * 3 + [("MPI_Ssend", partner, 8)]
             + [("MPI_Isend", q, 4096) for q in others] + [("MPI_Startall", right, 16)] * 5
             + [("MPI_Sendrecv", right, 65536)] * 2
             + [("MPI_Isend", r, 1), ("MPI_Isend", partner, 7), ("MPI_Isend", partner, 24)]
             + ([("MPI_Send", r + 1, 200)] if p >= 4 and r in (0, p // 2) else []))
    recvs = ([("MPI_Recv", partner, 1000)] * 3 + [("MPI_Recv", partner, 8)]
             + [("MPI_Irecv", q, 4096) for q in others] + [("MPI_Recv_init", left, 16)] * 5
             + [("MPI_Sendrecv", left, 65536)] * 2
             + [("MPI_Recv", r, 1), ("MPI_Recv", partner, 7), ("MPI_Irecv", partner, 24)]
             + ([("MPI_Recv", r - 1, 200)] if p >= 4 and r in (1, p // 2 + 1) else []))
    return sends, recvs


def channel(r, q, node_of):
    return "self" if q == r else ("node" if node_of[q] == node_of[r] else "net")


def check_profile(run_dir):
    prof = summary.load(run_dir)
    assert prof.np == NP and prof.context["missing_ranks"] == []
    node_of = prof.context["node_of"]
    cells = prof.cells
    for r in range(NP):
        sends, recvs = expected(r, NP, node_of)
        mine = cells[cells["rank"] == r]
        # Counts and bytes per call, every message call (the sendrecv's receive is in the matrix only).
        want = defaultdict(lambda: [0, 0])
        for call, _, b in sends + [x for x in recvs if x[0] != "MPI_Sendrecv"]:
            want[call][0] += 1
            want[call][1] += b
        got = mine[mine["channel"] != "none"].groupby("call")[["count", "bytes"]].sum()
        for call, (n, b) in want.items():
            assert (int(got.loc[call, "count"]), int(got.loc[call, "bytes"])) == (n, b), (r, call)
        # Channels: the bytes sent on each, from where each peer is.
        by_channel = Counter()
        for _, q, b in sends:
            by_channel[channel(r, q, node_of)] += b
        sent = mine[mine["family"] == "send"].groupby("channel")["bytes"].sum()
        assert {k: int(v) for k, v in sent.items() if k != "none" and v} == {k: v for k, v in by_channel.items() if v}
        # Size bins: every message in the bin of its size.
        for call, _, b in sends:
            row = mine[(mine["call"] == call) & (mine["lo"] <= b) & (mine["hi"] >= b) & (mine["channel"] != "none")]
            assert len(row) >= 1, (r, call, b)
        # The peer matrix, both directions.
        peers = prof.peers[prof.peers["rank"] == r]
        for direction, msgs in (("sent", sends), ("recv", recvs)):
            want_b, want_n = Counter(), Counter()
            for _, q, b in msgs:
                want_b[q] += b
                want_n[q] += 1
            rows = peers[peers["direction"] == direction]
            assert dict(zip(rows["peer"], rows["bytes"])) == dict(want_b), (r, direction)
            assert dict(zip(rows["peer"], rows["msgs"])) == dict(want_n), (r, direction)
        # Collectives: calls, bytes and communicator sizes.
        node_size = node_of.count(node_of[r])
        for call, items in COLLECTIVES.items():
            c = mine[mine["call"] == call]
            want_sizes = Counter()
            for size, b in items:
                want_sizes[(node_size if size == "node" else size)] += 1
            assert dict(c.groupby("comm_size")["count"].sum()) == dict(want_sizes), (r, call)
            assert int(c["bytes"].sum()) == sum(b for _, b in items), (r, call)
        # One-sided, waits, tests, probes.
        one = mine.groupby("call")["count"].sum()
        assert (one["MPI_Put"], one["MPI_Get"], one["MPI_Win_fence"]) == (1, 1, 3)
        assert (one["MPI_Wait"], one["MPI_Waitall"], one["MPI_Probe"]) == (5, 6, 1)
        assert one["MPI_Test"] >= 1
        assert (mine["time_s"] >= 0).all() and mine.loc[mine["call"] == "MPI_Bcast", "time_s"].sum() > 0
    # Call sites name the program's lines (the test program has debug information).
    if shutil.which("addr2line"):
        assert prof.sites.loc[prof.sites["call"] == "MPI_Bcast", "site"].str.contains("known_traffic.c").all()
    # Every rank measured the profiler's own cost.
    for rank in prof.context["ranks"].values():
        assert rank["overhead"]["wrapped_ns"] > 0 and rank["calls"] > 0
    return prof


# Linear bcast and allreduce (reduce to rank 0, then bcast), so the library
# messages of each call are known: p - 1 for a bcast, 2 (p - 1) for an allreduce.
LINEAR = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_bcast_algorithm": "1",
          "OMPI_MCA_coll_tuned_allreduce_algorithm": "1"}


def test_known_traffic_open_mpi_and_the_library_view(tmp_path):
    run_dir, doc = profile_ok(tmp_path, "openmpi", "--library-view", env=LINEAR)
    prof = check_profile(run_dir)
    assert doc["point_to_point"]["channels"]["net"]["messages"] == 0
    # Open MPI's monitoring: its user matrix is ours, but for the persistent sends
    # (MPI_Start), which Open MPI 4.1's pml monitoring does not count.
    ours = summary.matrix(prof, "bytes")
    persistent = np.zeros_like(ours)
    for r in range(NP):
        persistent[r, (r + 1) % NP] = 5 * 16
    theirs = summary.library_matrix(prof, "user", "bytes")
    assert (theirs == ours - persistent).all()
    msgs = summary.matrix(prof, "msgs") - (persistent > 0) * 5
    assert (summary.library_matrix(prof, "user", "msgs") == msgs).all()
    lv = summary.library_view(prof)
    assert lv["kinds"]["internal"]["msgs"] > 0 and lv["kinds"]["internal"]["msgs_crossing_nodes"] == 0
    # Per blocking collective call: the library's messages, exactly (known_traffic.c: a 1 MiB and a
    # 100 B bcast from rank 0; 3 allreduces of 64 B on all ranks, 2 of 8 KiB on each half).
    per = {(e["call"], e["comm_size"]): e for e in doc["library_per_collective"]}
    p = NP
    assert (per[("MPI_Bcast", p)]["operations"], per[("MPI_Bcast", p)]["messages"],
            per[("MPI_Bcast", p)]["bytes"]) == (2, 2 * (p - 1), (p - 1) * ((1 << 20) + 100))
    assert (per[("MPI_Allreduce", p)]["operations"], per[("MPI_Allreduce", p)]["messages"],
            per[("MPI_Allreduce", p)]["bytes"]) == (3, 3 * 2 * (p - 1), 3 * 2 * (p - 1) * 64)
    half = per[("MPI_Allreduce", p // 2)]
    assert (half["operations"], half["messages"], half["bytes"]) == (4, 4 * 2 * (p // 2 - 1), 4 * 2 * 8192)
    bcast = prof.library_colls[prof.library_colls["call"] == "MPI_Bcast"]
    assert dict(zip(bcast["rank"], bcast["msgs"])) == {0: 2 * (p - 1), **{r: 0 for r in range(1, p)}}  # the root
    assert all(e["messages_crossing_nodes"] == 0 for e in per.values())  # one node
    assert sum(e["messages"] for e in per.values()) <= lv["kinds"]["internal"]["msgs"]
    assert "MPI_Iallreduce" not in {c for c, _ in per}  # non-blocking: sent from progress, not attributed
    # The JSON document, the tuner's weights and the report of the same run.
    for name, document in (("profile", doc), ("profile-weights", _weights(tmp_path, run_dir))):
        jsonschema.validate(document, json.loads((SCHEMAS / f"{name}.schema.json").read_text()),
                            cls=jsonschema.Draft202012Validator)
    w = _weights(tmp_path, run_dir)
    allreduce = {e["comm_size"]: e for e in w["collectives"] if e["collective"] == "allreduce" and e["blocking"]}
    assert allreduce[NP]["calls"] == 3 * NP and allreduce[NP // 2]["calls"] == 2 * NP
    assert [(s["lo"], s["calls"]) for s in allreduce[NP // 2]["sizes"]] == [(8192, 2 * NP)]
    assert abs(sum(e["time_share"] for e in w["collectives"]) - 1) < 1e-9
    html = tmp_path / "profile.html"
    r = mpiscope("report", "--out", tmp_path, run_dir.name, "-o", html)
    assert r.returncode == 0, r.stderr
    text = html.read_text()
    assert text.count("<svg") >= 2 and "MPI_Sendrecv" in text and "known_traffic.c" in text
    assert f"bcast on {p} ranks: 2 calls →\n6 library messages" in text


def _weights(out, run_dir):
    p = mpiscope("profile", "weights", run_dir.name, "--out", out)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_known_traffic_mpich(tmp_path):
    if shutil.which("mpicc.mpich") is None:
        pytest.skip("MPICH is not installed")
    run_dir, _ = profile_ok(tmp_path, "mpich")
    check_profile(run_dir)


def test_a_rank_that_dies_loses_only_its_own_profile(tmp_path):
    p = mpiscope("profile", "--out", tmp_path, "--mpi", "openmpi", "--", *launch("openmpi", program_path("openmpi")),
                 env={"KNOWN_TRAFFIC_DIE": "2"}, timeout=300)
    assert p.returncode == 1
    assert "rank(s) 2 wrote no profile" in p.stderr
    [run] = [d for d in tmp_path.iterdir() if (d / "context.json").exists()]
    prof = summary.load(run)
    assert prof.context["status"] == "failed" and prof.context["missing_ranks"] == [2]
    assert sorted(prof.cells["rank"].unique()) == [0, 1, 3]
    shown = mpiscope("show", "--out", tmp_path)
    assert shown.returncode == 0 and "rank 2 wrote no profile" in shown.stderr


def test_bad_input_exits_2_and_stores_nothing(tmp_path):
    for argv in (["profile", "--out", tmp_path], ["profile", "--out", tmp_path, "--", "no-such-launcher-xyz"],
                 ["profile", "--out", tmp_path, "--mpi", "mpich", "--library-view", "--", "true"],
                 ["profile", "--out", tmp_path, "--trace", "0", "--", "true"]):
        p = mpiscope(*argv)
        assert p.returncode == 2, (argv, p.stderr)
        assert "error:" in p.stderr
    assert not any(tmp_path.iterdir())


def test_fortran_program_open_mpi(tmp_path):
    """Open MPI's Fortran layer calls PMPI_ directly: the library's Fortran wrappers count it."""
    if shutil.which("mpif90.openmpi") is None:
        pytest.skip("Open MPI's Fortran wrapper (gfortran) is not installed")
    program = ensure_library(find_mpi(mpi="openmpi"), "fortran") / "fortran-traffic"
    p = mpiscope("profile", "--out", tmp_path, "--mpi", "openmpi", "--json", "--",
                 *launch("openmpi", program, 2)[:3], str(program), timeout=300)
    assert p.returncode == 0, p.stderr
    prof = summary.load(tmp_path / json.loads(p.stdout)["run_id"])
    calls = prof.cells.groupby(["rank", "call"])[["count", "bytes"]].sum()
    assert tuple(calls.loc[(0, "MPI_Send")]) == (3, 240)
    assert tuple(calls.loc[(1, "MPI_Irecv")]) == (3, 240)
    assert calls.loc[(1, "MPI_Wait"), "count"] == 3
    for r in (0, 1):
        assert tuple(calls.loc[(r, "MPI_Allreduce")]) == (1, 16)
        assert calls.loc[(r, "MPI_Barrier"), "count"] == 1
    assert summary.matrix(prof).tolist() == [[0, 240], [0, 0]]


def test_trace_on_the_synchronized_clock(tmp_path):
    """--trace: every counted call is an event; on rank 0's clock no message is received before it was sent."""
    program = program_path("openmpi")
    p = mpiscope("profile", "--out", tmp_path, "--mpi", "openmpi", "--json", "--trace", "--",
                 *launch("openmpi", program, 2)[:3], str(program), timeout=300)
    assert p.returncode == 0, p.stderr
    prof = summary.load(tmp_path / json.loads(p.stdout)["run_id"])
    t = prof.trace
    assert t is not None and (t["t_end"] >= t["t_start"]).all()
    received = t["call"] == "MPI_Sendrecv_received"  # the trace's event for what a Sendrecv received
    for r in (0, 1):
        mine = prof.cells[prof.cells["rank"] == r]
        assert ((t["rank"] == r) & ~received).sum() == mine["count"].sum()
        assert ((t["rank"] == r) & received).sum() == mine.loc[mine["call"].isin(
            ["MPI_Sendrecv", "MPI_Sendrecv_replace"]), "count"].sum() > 0
        assert prof.context["ranks"][str(r)]["trace"]["dropped"] == 0
    # Phase A: rank 0 sends 3 x 1000 bytes to rank 1 (MPI_Send), which receives them in order (MPI_Recv).
    sends = t[(t["rank"] == 0) & (t["call"] == "MPI_Send") & (t["bytes"] == 1000)].sort_values("t_start")
    recvs = t[(t["rank"] == 1) & (t["call"] == "MPI_Recv") & (t["bytes"] == 1000)].sort_values("t_start")
    assert len(sends) == len(recvs) == 3
    assert (recvs["t_end"].to_numpy() >= sends["t_start"].to_numpy()).all()
    assert set(sends["peer"]) == {1} and set(recvs["peer"]) == {0}
