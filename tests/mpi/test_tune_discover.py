# SPDX-License-Identifier: BSD-3-Clause
"""mpiscope tune reads the algorithms from the library in use
(docs/tutorials/tune-collectives.md): ompi_info for Open MPI 4.1 and 5.0, MPI_T
control variables for MPICH 4.0 and 5.0, and the names MPICH's selection
JSON accepts from the library file itself."""

import pytest

from mpiscope.engine.build import REPO
from mpiscope.engine.mpi import identify
from mpiscope.mpilibs.algorithm_catalog import COLLECTIVES
from mpiscope.tune import discover as d

ENVS = REPO / "build" / "mpi-envs"
WRAPPERS = {"openmpi-4.1": "/usr/bin/mpicc.openmpi", "openmpi-5.0": str(ENVS / "openmpi5/bin/mpicc"),
            "mpich-4.0": "/usr/bin/mpicc.mpich", "mpich-5.0": str(ENVS / "mpich5/bin/mpicc")}


@pytest.fixture(scope="module")
def catalogs():
    out = {}
    for name, wrapper in WRAPPERS.items():
        assert __import__("os").path.isfile(wrapper), f"{wrapper} missing (make setup / make mpi-envs)"
        out[name] = d.discover(identify(wrapper))
    return out


def test_open_mpi_algorithms_come_with_the_numbers_the_library_gives(catalogs):
    c4, c5 = catalogs["openmpi-4.1"], catalogs["openmpi-5.0"]
    assert (c4.library, c5.library) == ("openmpi", "openmpi")
    for c in (c4, c5):
        assert set(c.algorithms) == set(COLLECTIVES)
        ring = c.find("allreduce", "ring")
        assert ring.value == "4"
        assert all(a.value != "0" for algs in c.algorithms.values() for a in algs)  # 0 = ignore
    # 5.0 knows sparbit allgather, 4.1 does not: read, not hard-coded
    assert "sparbit" in c5.names("allgather") and "sparbit" not in c4.names("allgather")
    # han outranks tuned in 5.0 and would take the collectives away
    assert c5.excluded_components == ["han"] and c4.excluded_components == []


def test_mpich_algorithms_from_mpi_t_and_the_library_file(catalogs):
    m4, m5 = catalogs["mpich-4.0"], catalogs["mpich-5.0"]
    for m in (m4, m5):
        assert m.device_override
        bcast = {a.name: a for a in m.algorithms["bcast"]}
        assert "auto" not in bcast
        assert bcast["binomial"].container == "MPIR_Bcast_intra_binomial"
        assert bcast["scatter_ring_allgather"].container == "MPIR_Bcast_intra_scatter_ring_allgather"
        assert bcast["nb"].container == "MPIR_Bcast_allcomm_nb"
        assert m.default_tree and "collective=bcast" in m.default_tree
    # MPICH 5 added algorithms MPICH 4.0 lacks
    assert "ring" in m5.names("allreduce") and "ring" not in m4.names("allreduce")
    assert m4.find("allgather", "brucks").value == "brucks"
