"""Emulated clusters: several hosts with shaped links on one machine.

Each host is a network namespace with its own host name; hosts hang off
switches (bridge namespaces); switches are chained by uplinks. Links are
shaped with tbf (rate), iptables statistic (loss) and our NFQUEUE delay
program (cluster/delayd.c). See README, "Emulated clusters".

    from mpiscope.cluster import cluster_launch
    argv, env, extra_context = cluster_launch("fe", "openmpi", 4, engine, engine_args)
"""

from .launching import cluster_launch, ground_truth
from .manager import delay_report, down, list_clusters, up
from .spec import PRESETS, make_spec, parse_link, payload_rate

__all__ = ["cluster_launch", "ground_truth", "delay_report", "down", "list_clusters", "up",
           "PRESETS", "make_spec", "parse_link", "payload_rate"]
