"""mpiscope profile on real applications from Debian, built with Open MPI:
LAMMPS (its Lennard-Jones melt, 100 steps) and HPCC (a small input), at 4
ranks on this machine. Asserted: invariants, never the application's
numbers (they change with its version and input): both ends of every
message agree, channels match placement, Open MPI's own user matrix equals
ours. The key numbers are printed (pytest -s) for the README."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from mpiscope.profile import summary
from runcli import mpiscope

DATA = Path(__file__).resolve().parent / "data"
LAUNCH = ["mpirun.openmpi", "-n", "4", "--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]


def _profile(out, cwd, *command, flags=()):
    p = mpiscope("profile", "--out", out, "--mpi", "openmpi", "--json", *flags, "--", *LAUNCH, *command,
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
