# SPDX-License-Identifier: BSD-3-Clause
"""The commands that wire and shape an emulated cluster (pure: argv lists
only). Rate: a `tbf` of one frame's depth on every shaped port's egress,
its size table adding each Ethernet frame's 24 bytes, so the rate is a line
rate; each frame's wire time charged where packets leave a host (raw OUTPUT
on eth0 to the delay program's egress queue, before the transmit queue, so a
GSO packet is held once for all its frames). Loss and delay act where
packets arrive (raw PREROUTING on eth0): loss a random DROP (senders then
build no GSO super-packets, so a drop takes one frame), delay an NFQUEUE
numbered by the uplinks crossed. Why: docs/explanation/emulated-clusters.md."""

from __future__ import annotations

import math

from mpiscope.cluster.spec import ETH_OVERHEAD, ETH_WIRE_EXTRA, ClusterSpec, Link
from mpiscope.cluster.topology import NETWORK, Plan

CHAIN = "MPISCOPE"
TC_TICK_S = 64e-9  # the kernel's packet scheduler clock tick
HOST_TXQUEUE_FRAMES = 1000  # a host's own transmit queue, as Linux's default txqueuelen
EGRESS_QUEUE = 65535  # the delay program's queue for what a host sends; arriving packets use 0..uplinks


def one_frame(rate_bps: float, mtu: int) -> int:
    """Token bucket depth: one full frame as the size table counts it, so a
    port never sends more than one frame ahead of its line rate. tc keeps
    the depth as whole microseconds at the rate, and the kernel drops a
    frame larger than the depth: round up to the next microsecond, with one
    kernel tick (64 ns) to spare."""
    frame_s = (mtu + ETH_OVERHEAD) * 8 / rate_bps
    us = math.ceil((frame_s + TC_TICK_S) * 1e6)
    return math.ceil(us * 1e-6 * rate_bps / 8)


def tbf(netns: str, dev: str, link: Link, mtu: int, limit: int):
    burst = one_frame(link.rate_bps, mtu)
    return [
        "tc",
        "-n",
        netns,
        "qdisc",
        "replace",
        "dev",
        dev,
        "root",
        "stab",
        "overhead",
        str(ETH_WIRE_EXTRA),
        "linklayer",
        "ethernet",
        "tbf",
        "rate",
        f"{int(link.rate_bps)}bit",
        "burst",
        str(burst),
        "limit",
        str(max(limit, burst)),
    ]


def wiring(plan: Plan):
    """Namespaces exist already; returns the commands for links, bridges and addresses."""
    spec = plan.spec
    mtu = str(spec.mtu)
    cmds = []
    for sw in plan.switches:
        cmds += [
            [
                "ip",
                "-n",
                sw.netns,
                "link",
                "add",
                "br0",
                "mtu",
                mtu,
                "type",
                "bridge",
                "stp_state",
                "0",
                "forward_delay",
                "0",
            ],
            ["ip", "-n", sw.netns, "link", "set", "lo", "up"],
        ]
    lossy = spec.link.loss > 0 or (spec.uplink is not None and spec.uplink.loss > 0)
    for h in plan.hosts:
        sw = plan.switches[h.switch]
        # Created directly inside the two namespaces: nothing ever appears in ours.
        cmds += [
            [
                "ip",
                "link",
                "add",
                "eth0",
                "netns",
                h.netns,
                "mtu",
                mtu,
                "type",
                "veth",
                "peer",
                "name",
                h.port,
                "netns",
                sw.netns,
                "mtu",
                mtu,
            ],
            ["ip", "-n", sw.netns, "link", "set", h.port, "master", "br0", "up"],
            ["ip", "-n", h.netns, "link", "set", "lo", "up"],
            *([["ip", "-n", h.netns, "link", "set", "eth0", "gso_max_segs", "1"]] if lossy else []),
            ["ip", "-n", h.netns, "addr", "add", f"{h.address}/{NETWORK.prefixlen}", "dev", "eth0"],
            ["ip", "-n", h.netns, "link", "set", "eth0", "up"],
        ]
    for up in plan.uplinks:
        a, b = plan.switches[up.a], plan.switches[up.b]
        cmds += [
            [
                "ip",
                "link",
                "add",
                up.port_a,
                "netns",
                a.netns,
                "mtu",
                mtu,
                "type",
                "veth",
                "peer",
                "name",
                up.port_b,
                "netns",
                b.netns,
                "mtu",
                mtu,
            ],
            ["ip", "-n", a.netns, "link", "set", up.port_a, "master", "br0", "up"],
            ["ip", "-n", b.netns, "link", "set", up.port_b, "master", "br0", "up"],
        ]
    for sw in plan.switches:
        cmds.append(["ip", "-n", sw.netns, "link", "set", "br0", "up"])
    return cmds


def rate_limits(plan: Plan):
    spec: ClusterSpec = plan.spec
    mtu = spec.mtu
    cmds = []
    link = spec.link
    if link.rate_bps is not None:
        for h in plan.hosts:
            host_queue = max(link.queue_limit(), HOST_TXQUEUE_FRAMES * (mtu + ETH_OVERHEAD))
            cmds.append(tbf(h.netns, "eth0", link, mtu, host_queue))
            cmds.append(tbf(plan.switches[h.switch].netns, h.port, link, mtu, link.queue_limit()))
    up = spec.uplink
    if up is not None and up.rate_bps is not None:
        for u in plan.uplinks:
            cmds.append(tbf(plan.switches[u.a].netns, u.port_a, up, mtu, up.queue_limit()))
            cmds.append(tbf(plan.switches[u.b].netns, u.port_b, up, mtu, up.queue_limit()))
    return cmds


def _probability(p: float) -> str:
    return f"{p:.10f}".rstrip("0").rstrip(".")


def filter_rules(plan: Plan, host):
    """iptables argv lists (to run inside `host`'s namespace) for its loss and delay.

    Order matters: drops first (a dropped packet is never delayed), then the
    queues, most specific source first.
    """
    link = plan.spec.link
    classes = plan.path_classes(host)
    base = ["iptables", "-w", "-t", "raw", "-A", CHAIN]
    rules = []
    if link.loss > 0:
        rules.append(
            base
            + [
                "-s",
                str(NETWORK),
                "-m",
                "statistic",
                "--mode",
                "random",
                "--probability",
                _probability(link.loss),
                "-j",
                "DROP",
            ]
        )
    for c in classes:
        if c.hops and c.loss > 0:
            rules.append(
                base
                + [
                    "-s",
                    c.source,
                    "-m",
                    "statistic",
                    "--mode",
                    "random",
                    "--probability",
                    _probability(c.loss),
                    "-j",
                    "DROP",
                ]
            )
    same_switch_delayed = _held(classes[0])
    for c in sorted(classes, key=lambda c: -c.hops):
        if _held(c):
            rules.append(base + ["-s", c.source, "-j", "NFQUEUE", "--queue-num", str(c.hops)])
        elif c.hops and same_switch_delayed:
            # No delay for this origin: accept before the same-switch queue catches it.
            rules.append(base + ["-s", c.source, "-j", "ACCEPT"])
    if rules:
        rules = [
            ["iptables", "-w", "-t", "raw", "-N", CHAIN],
            ["iptables", "-w", "-t", "raw", "-A", "PREROUTING", "-i", "eth0", "-j", CHAIN],
        ] + rules
    if link.rate_bps is not None:
        rules.append(
            [
                "iptables",
                "-w",
                "-t",
                "raw",
                "-A",
                "OUTPUT",
                "-o",
                "eth0",
                "-j",
                "NFQUEUE",
                "--queue-num",
                str(EGRESS_QUEUE),
            ]
        )
    return rules


def _held(c) -> bool:
    """Whether the delay program holds arriving packets of path class `c` (for a delay)."""
    return c.delay_ns > 0 or c.jitter_ns > 0


def delay_queues(plan: Plan):
    """(host, queue number, delay ns, jitter ns, line rate bit/s or 0) for
    every queue the delay program serves: per host its egress queue with the
    host link's rate (the wire its packets cross first), and a queue per
    delayed path class for what arrives."""
    rate = plan.spec.link.rate_bps
    out = []
    for h in plan.hosts:
        if rate is not None:
            out.append((h, EGRESS_QUEUE, 0, 0, int(rate)))
        for c in plan.path_classes(h):
            if _held(c):
                out.append((h, c.hops, c.delay_ns, c.jitter_ns, 0))
    return out
