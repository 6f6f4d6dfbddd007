# SPDX-License-Identifier: BSD-3-Clause
"""The MPI library's eager limit that the application's what-if takes
(mpilibs/eager_limit.py): Open MPI's btl tcp between hosts, vader or sm within
one, less ob1's match header; an MCA setting wins; MPICH ch4:ucx below
UCX's rendezvous threshold (ucx_rndv.py), as set or as ucx_info reports it;
where the limit is not known every message stays eager."""

import math
import subprocess

from mpiscope.mpilibs.eager_limit import OB1_MATCH_HEADER, TCP_EAGER, eager_limit
from mpiscope.mpilibs.mpich.ucx_rndv import memunits
from mpiscope.mpilibs.openmpi.paths import OMPI_EAGER


def _ctx(nodes, argv=(), env=None, library="Open MPI v4.1.4", mpi="openmpi"):
    return {
        "mpi": mpi,
        "nodes": nodes,
        "mpi_library": library,
        "env": env or {},
        "launch_commands": [["mpirun.openmpi", "-n", "4", *argv, "lmp"]],
    }


def test_open_mpi_between_hosts_is_tcp_and_within_one_shared_memory():
    tcp = eager_limit(_ctx(4, ("--mca", "btl", "tcp,self")))
    assert tcp.bytes == TCP_EAGER - OB1_MATCH_HEADER == 65520 and "btl_tcp_eager_limit" in tcp.source
    vader = eager_limit(_ctx(1))
    assert vader.bytes == OMPI_EAGER - OB1_MATCH_HEADER and "btl_vader_eager_limit" in vader.source
    assert "btl_sm_eager_limit" in eager_limit(_ctx(1, library="Open MPI v5.0.3")).source


def test_an_mca_setting_wins_from_the_command_line_or_the_environment():
    assert eager_limit(_ctx(2, ("--mca", "btl_tcp_eager_limit", "131072"))).bytes == 131072 - OB1_MATCH_HEADER
    assert eager_limit(_ctx(1, env={"OMPI_MCA_btl_vader_eager_limit": "8192"})).bytes == 8192 - OB1_MATCH_HEADER
    exported = ("-x", "OMPI_MCA_btl_tcp_eager_limit=32768")
    assert eager_limit(_ctx(2, exported)).bytes == 32768 - OB1_MATCH_HEADER


def test_where_the_limit_is_not_known_every_message_is_eager():
    for ctx in (_ctx(2, mpi="mpich"), _ctx(2, ("--mca", "pml", "ucx")), _ctx(2, ("--mca", "btl", "openib,self")), {}):
        e = eager_limit(ctx)
        assert math.isinf(e.bytes) and "every message eager" in e.source
    assert eager_limit(_ctx(2, ("--mca", "pml", "^ucx"))).bytes == 65520  # ucx excluded: ob1


def test_the_btl_selection_decides_the_transport():
    assert eager_limit(_ctx(1, ("--mca", "btl", "self,tcp"))).bytes == 65520  # one host, TCP alone
    assert eager_limit(_ctx(1, ("--mca", "btl", "^tcp"))).bytes == OMPI_EAGER - OB1_MATCH_HEADER
    assert math.isinf(eager_limit(_ctx(2, ("--mca", "btl", "^tcp"))).bytes)  # no TCP between hosts


UCX_LIB = "MPICH Version:\t4.0.2\nMPICH Device:\tch4:ucx"
REPORT = """#                 lane[0]:  1:tcp/eth0.0 md[1]  -> md[1]/tcp/sysdev[255] rma_bw#0 am am_bw#0 wireup
#                tag_send: 0..<egr/short>..8185..<egr/zcopy>..{}..<rndv>..(inf)
#            tag_send_nbr: 0..<egr/short>..8185..<egr/bcopy>..262144..<rndv>..(inf)
"""


class FakeUcxInfo:
    """Stands in for ucx_info: records each call, answers with `report` (None: not installed)."""

    def __init__(self, report):
        self.report, self.calls = report, []

    def __call__(self, argv, env, **kw):
        self.calls.append((argv, env))
        if self.report is None:
            raise FileNotFoundError(argv[0])
        return subprocess.CompletedProcess(argv, 0, self.report, "")


def _mpich(nodes, env=None, argv=(), library=UCX_LIB):
    return {
        "mpi": "mpich",
        "nodes": nodes,
        "mpi_library": library,
        "env": env or {},
        "launch_commands": [["mpirun.mpich", "-n", "4", *argv, "mocassin"]],
    }


def test_mpich_ucx_takes_the_threshold_ucx_info_reports_for_the_peer_placement():
    for nodes, placement, rndv in ((4, "inter", 20419), (1, "intra", 8256)):
        fake = FakeUcxInfo(REPORT.format(rndv))
        e = eager_limit(_mpich(nodes, env={"UCX_TLS": "self,tcp"}), run=fake)
        assert e.bytes == rndv - 1 and f"rendezvous from {rndv} B" in e.source
        ((argv, env),) = fake.calls
        assert argv[:2] == ["ucx_info", "-e"] and argv[argv.index("-P") + 1] == placement
        assert env["UCX_TLS"] == "self,tcp"


def test_an_explicit_ucx_rndv_thresh_wins_without_asking_ucx_info():
    fake = FakeUcxInfo(REPORT.format(8192))
    assert eager_limit(_mpich(2, argv=("-genv", "UCX_RNDV_THRESH", "32k")), run=fake).bytes == 32767
    assert eager_limit(_mpich(2, env={"UCX_RNDV_THRESH": "65536"}), run=fake).bytes == 65535
    assert math.isinf(eager_limit(_mpich(2, env={"UCX_RNDV_THRESH": "inf"}), run=fake).bytes)
    assert fake.calls == []
    eager_limit(_mpich(2, env={"UCX_RNDV_THRESH": "auto"}), run=fake)
    assert len(fake.calls) == 1


def test_mpich_stays_all_eager_without_ucx_info_or_on_another_device():
    for ctx, fake in (
        (_mpich(2), FakeUcxInfo(None)),
        (_mpich(2), FakeUcxInfo("no endpoint here\n")),
        (_mpich(2, library="MPICH Version:\t4.1\nMPICH Device:\tch4:ofi"), FakeUcxInfo(REPORT.format(1))),
    ):
        e = eager_limit(ctx, run=fake)
        assert math.isinf(e.bytes) and "every message eager" in e.source


def test_the_launch_ucx_settings_reach_ucx_info_and_the_callers_do_not(monkeypatch):
    monkeypatch.setenv("UCX_RNDV_THRESH", "4k")
    monkeypatch.setenv("UCX_NET_DEVICES", "eth9")
    fake = FakeUcxInfo(REPORT.format(8192))
    eager_limit(_mpich(2, argv=("-genv", "UCX_NET_DEVICES", "lo")), run=fake)
    ((_, env),) = fake.calls
    assert env["UCX_NET_DEVICES"] == "lo" and "UCX_RNDV_THRESH" not in env


def test_memunits_read_as_ucx_reads_them():
    assert [memunits(t) for t in ("8192", "32k", "32KB", "1m", "2G", "inf", "auto", "lots")] == [
        8192,
        32768,
        32768,
        1 << 20,
        2 << 30,
        math.inf,
        None,
        None,
    ]
