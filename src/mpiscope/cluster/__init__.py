# SPDX-License-Identifier: BSD-3-Clause
"""Emulated clusters: several hosts with shaped links on one machine.

Each host is a network namespace with its own host name; hosts hang off
switches (bridge namespaces); switches are chained by uplinks. Links are
shaped with tbf (rate), iptables statistic (loss) and our NFQUEUE delay
program (native/cluster/delayd.c). See docs/explanation/emulated-clusters.md.

    from mpiscope.cluster import up, down, list_clusters
"""

from mpiscope.cluster.manager import delay_report, down, list_clusters, up
from mpiscope.cluster.spec import PRESETS, make_spec, parse_link, payload_rate

__all__ = ["delay_report", "down", "list_clusters", "up", "PRESETS", "make_spec", "parse_link", "payload_rate"]
