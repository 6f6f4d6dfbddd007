# SPDX-License-Identifier: BSD-3-Clause
"""mpiscope profile --cluster: LAMMPS (Lennard-Jones melt, 50 steps) and HPCC
(N = 500) with Open MPI, ScaLAPACK's LU driver with MPICH, on an emulated
cluster of 2 hosts x 2 slots. Asserted: each rank
ran on the emulated host the placement gives it (its own host name says so),
MPI's node split agrees with it, both ends of every pair agree, and every
rank's point-to-point bytes and messages sent on the "same node" and "other
node" channels are exactly its row of the peer matrix summed over the peers
on its host and off it. (Receives are not split so: MPI_Sendrecv's cell
holds its send, while its receive is in the matrix.) The channel shares are printed (pytest -s). Needs root."""

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from mpiscope.profile import summary
from runcli import mpiscope

DATA = Path(__file__).resolve().parents[1] / "data"
NAME = f"pc{os.getpid() % 100000}"

pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="emulated clusters need root"),
              pytest.mark.skipif(shutil.which("lmp") is None or shutil.which("hpcc") is None,
                                 reason="LAMMPS and HPCC are not installed (scripts/setup-system.sh)")]


@pytest.fixture(scope="module")
def cluster():
    r = mpiscope("cluster", "up", NAME, "--hosts", 2, "--slots", 2)
    assert r.returncode == 0, r.stderr
    yield NAME
    mpiscope("cluster", "down", NAME)


def _profile(cluster, out, cwd, *command, mpi="openmpi", options=()):
    p = mpiscope("profile", "--out", out, "--mpi", mpi, "--cluster", cluster, "-n", 4, *options, "--json", "--",
                 *command, cwd=cwd, timeout=600)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    doc = json.loads(p.stdout)
    return summary.load(out / doc["run_id"]), doc


def _per_rank_channel(prof, family, channel, what):
    c = prof.cells[(prof.cells["family"] == family) & (prof.cells["channel"] == channel)]
    return c.groupby("rank")[what].sum().reindex(range(prof.np), fill_value=0).to_numpy(np.int64)


def _split_as_placed(prof, doc, name):
    ctx = prof.context
    assert ctx["status"] == "completed" and prof.np == 4
    placement = ctx["cluster"]["placement"]
    assert placement == [f"{NAME}-h0"] * 2 + [f"{NAME}-h1"] * 2
    assert [ctx["ranks"][str(r)]["host"] for r in range(4)] == placement, "each rank ran where it was placed"
    host = np.array(placement)
    same = host[:, None] == host[None, :]
    np.fill_diagonal(same, False)
    other = host[:, None] != host[None, :]
    # MPI's node split (MPI_Comm_split_type SHARED) groups the ranks exactly by emulated host.
    node_of = np.array(ctx["node_of"])
    assert ctx["nodes"] == 2 and ((node_of[:, None] == node_of[None, :]) == (host[:, None] == host[None, :])).all()
    counted = {"bytes": "bytes", "msgs": "count"}
    for what in ("bytes", "msgs"):
        m = summary.matrix(prof, what)
        # What each rank received from each peer is what that peer sent it.
        r = prof.peers[prof.peers["direction"] == "recv"]
        received = np.zeros_like(m)
        received[r["peer"].to_numpy(int), r["rank"].to_numpy(int)] = r[what].to_numpy()
        assert (received == m).all()
        # A rank's sends on a channel are its row of the matrix over the peers of that channel.
        for channel, mask in (("node", same), ("net", other)):
            assert (_per_rank_channel(prof, "send", channel, counted[what]) == (m * mask).sum(axis=1)).all(), \
                (what, channel)
    m = summary.matrix(prof, "bytes")
    ch = doc["point_to_point"]["channels"]
    assert ch["node"]["bytes"] == (m * same).sum() and ch["net"]["bytes"] == (m * other).sum()
    assert ch["self"]["bytes"] == np.trace(m)
    assert ch["node"]["messages"] > 0 and ch["net"]["messages"] > 0, "both channels carry traffic"
    print(f"\n{name} on 2 hosts x 2 slots: p2p {json.dumps(doc['point_to_point'])}")


def test_lammps_splits_as_placed_in_both_views(cluster, tmp_path):
    """With --library-view too: Open MPI's own user-traffic matrix is ours,
    and the library's messages per collective call cross nodes as placed."""
    prof, doc = _profile(cluster, tmp_path, tmp_path, "lmp", "-in", DATA / "in.lj", "-var", "steps", "50",
                         "-log", "none", "-screen", "none", options=("--library-view",))
    _split_as_placed(prof, doc, "LAMMPS")
    for what in ("bytes", "msgs"):
        assert (summary.library_matrix(prof, "user", what) == summary.matrix(prof, what)).all(), what
    host = np.array(prof.context["cluster"]["placement"])
    internal = summary.library_matrix(prof, "internal", "msgs")
    crossing = int((internal * (host[:, None] != host[None, :])).sum())
    per = summary.library_per_collective(prof)
    allreduce = per[(per["call"] == "MPI_Allreduce") & (per["comm_size"] == 4)]
    # Four ranks on two hosts cannot agree on a sum without a message between the hosts.
    assert len(allreduce) == 1 and allreduce["msgs_net"].iloc[0] > 0
    # What the blocking collectives sent across nodes is part of all the internal traffic that did.
    assert 0 < per["msgs_net"].sum() <= crossing
    print(f"\nLAMMPS library view on 2 hosts x 2 slots:\n{per.to_string()}")


def test_hpcc_splits_as_placed(cluster, tmp_path):
    shutil.copy(DATA / "hpccinf.txt", tmp_path / "hpccinf.txt")
    prof, doc = _profile(cluster, tmp_path, tmp_path, "hpcc")
    assert "Success=1" in (tmp_path / "hpccoutf.txt").read_text()
    _split_as_placed(prof, doc, "HPCC")


XDLU = Path("/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests/xdlu")


@pytest.mark.skipif(not XDLU.exists(), reason="ScaLAPACK's MPICH test drivers are not installed (scripts/setup-system.sh)")
def test_scalapack_lu_with_mpich_splits_as_placed(cluster, tmp_path):
    shutil.copy(DATA / "scalapack-LU.dat", tmp_path / "LU.dat")
    prof, doc = _profile(cluster, tmp_path, tmp_path, XDLU, mpi="mpich")
    assert "1 tests completed and passed residual checks" in (tmp_path / prof.context["run_id"] / "launch-0.log").read_text()
    _split_as_placed(prof, doc, "ScaLAPACK LU (MPICH)")
