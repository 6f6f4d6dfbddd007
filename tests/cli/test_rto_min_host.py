# SPDX-License-Identifier: BSD-3-Clause
"""RTO_min read from this host (`ip route` and the kernel's sysctl,
stats/rto.py): whatever the host has, a positive time and its source."""

from mpiscope.stats.rto import rto_min


def test_rto_min_reads_this_host():
    r = rto_min()
    assert r["rto_min_s"] > 0 and r["source"]
