# SPDX-License-Identifier: BSD-3-Clause
"""mpiscope profile on real applications from Debian at 4 ranks on this
machine: built with Open MPI, LAMMPS (its Lennard-Jones melt, 100 steps) and
HPCC (a small input); built with MPICH, ScaLAPACK's LU test driver (xdlu,
from scalapack-mpi-test; N = 512 on a 2 x 2 grid). Asserted: invariants, never the application's
numbers (they change with its version and input): both ends of every
message agree, channels match placement, Open MPI's own user matrix equals
ours. The key numbers are printed (pytest -s)."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from mpiscope.profile import summary
from runcli import mpiscope

DATA = Path(__file__).resolve().parents[1] / "data"
LAUNCH = ["mpirun.openmpi", "-n", "4", "--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]
MPICH_LAUNCH = ["mpiexec.mpich", "-n", "4"]
XDLU = Path("/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests/xdlu")


def _profile(out, cwd, *command, flags=(), mpi="openmpi", launch=LAUNCH):
    p = mpiscope("profile", "--out", out, "--mpi", mpi, "--json", *flags, "--", *launch, *command,
                 cwd=cwd, timeout=600)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    doc = json.loads(p.stdout)
    return summary.load(out / doc["run_id"]), doc


def _invariants(prof, doc):
    assert prof.context["status"] == "completed" and prof.context["missing_ranks"] == []
    assert prof.np == 4 and prof.context["nodes"] == 1
    sent, recv = summary.matrix(prof, "bytes"), np.zeros((4, 4), dtype=np.int64)
    r = prof.peers[prof.peers["direction"] == "recv"]
    recv[r["peer"].to_numpy(int), r["rank"].to_numpy(int)] = r["bytes"].to_numpy()
    assert (sent == recv).all(), "what a rank sent to a peer is what the peer received from it"
    assert sent.sum() > 0
    # One machine: no message leaves the node; a message to oneself is "self".
    assert doc["point_to_point"]["channels"]["net"]["messages"] == 0
    self_sent = np.trace(summary.matrix(prof, "msgs"))
    assert doc["point_to_point"]["channels"]["self"]["messages"] == self_sent
    assert all(r["overhead"]["wrapped_ns"] > 0 for r in prof.context["ranks"].values())
    # Every message is counted once per call at its sender: the point-to-point cells add up to the matrix.
    sends = summary.messages(prof, "send")
    assert sends["bytes"].sum() == sent.sum() and sends["count"].sum() == summary.matrix(prof, "msgs").sum()
    assert doc["point_to_point"]["messages"] == sends["count"].sum()
    print(f"\n{doc['command']}: p2p {json.dumps(doc['point_to_point'])}\ncoll {json.dumps(doc['collectives'])}\n"
          f"overhead {prof.context['overhead']}")


@pytest.mark.skipif(shutil.which("lmp") is None, reason="LAMMPS is not installed (scripts/setup-system.sh)")
def test_lammps_lj_and_the_library_view(tmp_path):
    prof, doc = _profile(tmp_path, tmp_path, "lmp", "-in", DATA / "in.lj", "-var", "steps", "100", "-log", "none",
                         "-screen", "none", flags=("--library-view",))
    _invariants(prof, doc)
    calls = set(prof.cells["call"])
    assert {"MPI_Send", "MPI_Irecv", "MPI_Allreduce"} <= calls
    # Open MPI's monitoring counts exactly the user messages we count (LAMMPS starts no persistent requests).
    assert not calls & {"MPI_Start", "MPI_Startall"}
    assert (summary.library_matrix(prof, "user", "bytes") == summary.matrix(prof, "bytes")).all()
    assert (summary.library_matrix(prof, "user", "msgs") == summary.matrix(prof, "msgs")).all()


@pytest.mark.skipif(shutil.which("hpcc") is None, reason="HPCC is not installed (scripts/setup-system.sh)")
def test_hpcc(tmp_path):
    shutil.copy(DATA / "hpccinf.txt", tmp_path / "hpccinf.txt")
    prof, doc = _profile(tmp_path, tmp_path, "hpcc")
    _invariants(prof, doc)
    assert "Success=1" in (tmp_path / "hpccoutf.txt").read_text()
    # Collectives on the world and on communicators of one rank (HPL broadcasts its panels with
    # point-to-point messages); a communicator of one rank is the "self" channel.
    coll = prof.cells[prof.cells["family"] == "coll"]
    assert 4 in set(coll["comm_size"]) and set(coll["comm_size"]) <= {1, 2, 4}
    assert set(coll.loc[coll["comm_size"] == 1, "channel"]) <= {"self"}
    assert set(coll.loc[coll["comm_size"] == 4, "channel"]) == {"node"}


@pytest.mark.skipif(not XDLU.exists() or shutil.which("mpiexec.mpich") is None,
                    reason="ScaLAPACK's MPICH test drivers are not installed (scripts/setup-system.sh)")
def test_scalapack_lu_with_mpich(tmp_path):
    shutil.copy(DATA / "scalapack-LU.dat", tmp_path / "LU.dat")
    prof, doc = _profile(tmp_path, tmp_path, XDLU, mpi="mpich", launch=MPICH_LAUNCH)
    assert "MPICH" in prof.context["mpi_library"]
    _invariants(prof, doc)
    log = (tmp_path / prof.context["run_id"] / "launch-0.log").read_text()
    assert "1 tests completed and passed residual checks" in log, log[-2000:]
    # Its receives are all matched (MPI_Recv and MPI_Irecv): bytes received equal bytes sent, also per call family.
    recvs = summary.messages(prof, "recv")
    assert recvs["bytes"].sum() == summary.matrix(prof, "bytes").sum()
    # BLACS broadcasts over the grid's rows and columns (2 ranks each) and the whole grid.
    coll = prof.cells[prof.cells["family"] == "coll"]
    assert "MPI_Bcast" in set(coll["call"]) and set(coll["comm_size"]) <= {1, 2, 4}
