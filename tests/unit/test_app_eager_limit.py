# SPDX-License-Identifier: BSD-3-Clause
"""The MPI library's eager limit that the application's what-if takes
(app/eager_limit.py): Open MPI's btl tcp between hosts, vader or sm within
one, less ob1's match header; an MCA setting wins; where the limit is not
known every message stays eager."""

import math

from mpiscope.app.eager_limit import OB1_MATCH_HEADER, TCP_EAGER, eager_limit
from mpiscope.mpilibs.openmpi.paths import OMPI_EAGER


def _ctx(nodes, argv=(), env=None, library="Open MPI v4.1.4", mpi="openmpi"):
    return {"mpi": mpi, "nodes": nodes, "mpi_library": library, "env": env or {},
            "launch_commands": [["mpirun.openmpi", "-n", "4", *argv, "lmp"]]}


def test_open_mpi_between_hosts_is_tcp_and_within_one_shared_memory():
    tcp = eager_limit(_ctx(4, ("--mca", "btl", "tcp,self")))
    assert tcp.bytes == TCP_EAGER - OB1_MATCH_HEADER == 65520 and "btl_tcp_eager_limit" in tcp.source
    vader = eager_limit(_ctx(1))
    assert vader.bytes == OMPI_EAGER - OB1_MATCH_HEADER and "btl_vader_eager_limit" in vader.source
    assert "btl_sm_eager_limit" in eager_limit(_ctx(1, library="Open MPI v5.0.3")).source


def test_an_mca_setting_wins_from_the_command_line_or_the_environment():
    assert eager_limit(_ctx(2, ("--mca", "btl_tcp_eager_limit", "131072"))).bytes == 131072 - OB1_MATCH_HEADER
    assert eager_limit(_ctx(1, env={"OMPI_MCA_btl_vader_eager_limit": "8192"})).bytes == 8192 - OB1_MATCH_HEADER


def test_where_the_limit_is_not_known_every_message_is_eager():
    for ctx in (_ctx(2, mpi="mpich"), _ctx(2, ("--mca", "pml", "ucx")), _ctx(2, ("--mca", "btl", "openib,self")), {}):
        e = eager_limit(ctx)
        assert math.isinf(e.bytes) and "every message eager" in e.source
    assert eager_limit(_ctx(2, ("--mca", "pml", "^ucx"))).bytes == 65520   # ucx excluded: ob1


def test_the_btl_selection_decides_the_transport():
    assert eager_limit(_ctx(1, ("--mca", "btl", "self,tcp"))).bytes == 65520           # one host, TCP alone
    assert eager_limit(_ctx(1, ("--mca", "btl", "^tcp"))).bytes == OMPI_EAGER - OB1_MATCH_HEADER
    assert math.isinf(eager_limit(_ctx(2, ("--mca", "btl", "^tcp"))).bytes)             # no TCP between hosts
