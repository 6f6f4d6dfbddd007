# SPDX-License-Identifier: BSD-3-Clause
"""The installed ucx_info (Debian's ucx-utils) prints the endpoint report
that mpilibs/mpich/ucx_rndv.py reads MPICH ch4:ucx's rendezvous threshold from."""

from mpiscope.mpilibs.mpich.ucx_rndv import rndv_from, ucx_info_report


def test_the_installed_ucx_info_reports_a_tag_send_threshold_that_is_read():
    report = ucx_info_report("intra", {"UCX_RNDV_THRESH": "12345"})
    assert report is not None, "ucx_info (Debian's ucx-utils, scripts/setup-system.sh) is needed"
    assert rndv_from(report) == 12345
    for placement in ("intra", "inter"):
        assert 0 < rndv_from(ucx_info_report(placement, {})) < float("inf")
