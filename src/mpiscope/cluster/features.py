# SPDX-License-Identifier: BSD-3-Clause
"""Checks, before anything is built, that this machine can emulate the cluster asked for.

Each kernel feature is tried for real inside a throw-away namespace (which
is removed again), so the answer does not depend on where the kernel keeps
its configuration. A missing feature raises UsageError naming it.
"""

from __future__ import annotations

import os
import shutil

from mpiscope.common.errors import UsageError
from mpiscope.cluster import netns as ns
from mpiscope.cluster.spec import ClusterSpec
from mpiscope.cluster.topology import NS_PREFIX

TOOLS = {
    "ip": "iproute2",
    "tc": "iproute2",
    "iptables": "iptables",
    "nsenter": "util-linux",
    "unshare": "util-linux",
    "mount": "mount",
    "umount": "mount",
    "hostname": "hostname",
}


class MissingFeature(UsageError):
    pass


def check_root():
    if os.geteuid() != 0:
        raise UsageError(
            "cluster up needs root: it creates network namespaces, links and "
            "firewall rules (run it with sudo, or as root)"
        )


def check_tools():
    missing = sorted({f"{tool} (Debian package {pkg})" for tool, pkg in TOOLS.items() if shutil.which(tool) is None})
    if missing:
        raise UsageError(
            f"cluster up needs these programs, which are not installed: "
            f"{', '.join(missing)}; run 'make setup' or scripts/setup-system.sh"
        )


def _try(argv, feature, hint):
    try:
        ns.run(argv)
    except ns.ClusterError as e:
        raise MissingFeature(
            f"this kernel lacks {feature}, needed for the emulated cluster ({hint}); the test said: {e}"
        ) from None


def probe(spec: ClusterSpec, delayd=None, probe_name=None):
    """Tries every feature `spec` needs. `delayd` is the delay program, needed for
    delay and for the wire time of a host link with a rate."""
    needs_rate = spec.link.rate_bps is not None or (spec.uplink and spec.uplink.rate_bps is not None)
    needs_loss = spec.link.loss > 0 or (spec.uplink and spec.uplink.loss > 0)
    needs_delay = (
        spec.link.delay_ns > 0
        or spec.link.jitter_ns > 0
        or (spec.uplink and (spec.uplink.delay_ns > 0 or spec.uplink.jitter_ns > 0))
    )
    name = probe_name or f"{NS_PREFIX}probe-{os.getpid()}"
    try:
        _try(["ip", "netns", "add", name], "network namespaces", "CONFIG_NET_NS")
        _try(["ip", "-n", name, "link", "add", "p0", "type", "veth", "peer", "name", "p1"], "veth", "CONFIG_VETH")
        _try(["ip", "-n", name, "link", "add", "br0", "type", "bridge"], "bridges", "CONFIG_BRIDGE")
        _try(["unshare", "--uts", "true"], "UTS namespaces (own host names)", "CONFIG_UTS_NS")
        if needs_rate:
            _try(
                [
                    "tc",
                    "-n",
                    name,
                    "qdisc",
                    "add",
                    "dev",
                    "p0",
                    "root",
                    "stab",
                    "overhead",
                    "24",
                    "tbf",
                    "rate",
                    "100mbit",
                    "burst",
                    "4000",
                    "limit",
                    "65536",
                ],
                "the tbf queueing discipline with size tables",
                "CONFIG_NET_SCH_TBF",
            )
        if needs_loss or needs_delay:
            _try(
                ns.in_ns(name, ["iptables", "-w", "-t", "raw", "-A", "PREROUTING", "-i", "p0", "-j", "ACCEPT"]),
                "iptables' raw table",
                "CONFIG_IP_NF_RAW, or nf_tables with CONFIG_NFT_COMPAT",
            )
        if needs_loss:
            _try(
                ns.in_ns(
                    name,
                    [
                        "iptables",
                        "-w",
                        "-t",
                        "raw",
                        "-A",
                        "PREROUTING",
                        "-i",
                        "p0",
                        "-m",
                        "statistic",
                        "--mode",
                        "random",
                        "--probability",
                        "0.5",
                        "-j",
                        "DROP",
                    ],
                ),
                "the iptables statistic match (for loss)",
                "CONFIG_NETFILTER_XT_MATCH_STATISTIC",
            )
        if needs_delay:
            _try(
                ns.in_ns(
                    name,
                    [
                        "iptables",
                        "-w",
                        "-t",
                        "raw",
                        "-A",
                        "PREROUTING",
                        "-i",
                        "p0",
                        "-j",
                        "NFQUEUE",
                        "--queue-num",
                        "0",
                    ],
                ),
                "the iptables NFQUEUE target (for delay)",
                "CONFIG_NETFILTER_XT_TARGET_NFQUEUE",
            )
            if delayd is not None:
                _try(
                    [delayd, "--check", "--queue", f"{ns.netns_path(name)}:0:1000"],
                    "netfilter queues (NFQUEUE, for wire time and delay)",
                    "CONFIG_NETFILTER_NETLINK_QUEUE",
                )
    finally:
        ns.delete_netns(name)
