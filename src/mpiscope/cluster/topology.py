# SPDX-License-Identifier: BSD-3-Clause
"""Where every emulated host, switch, interface and address goes: pure
planning from a ClusterSpec, tested without root.

- host i is the namespace `mps-NAME-hI` (UTS name `NAME-hI`, interface `eth0`);
  switch k is `mps-NAME-swK` with the bridge `br0` and one port `hI` per host;
- hosts fill the switches in contiguous blocks (h0, h1 on sw0, h2, h3 on sw1,
  ...); the switches form a chain joined by uplinks (ports `up-swK`);
- host j of switch k is 198.18.k.(j+1) in 198.18.0.0/16, the only route a
  host has, so nothing outside it is reachable."""

from __future__ import annotations

import dataclasses
import ipaddress

from mpiscope.cluster.spec import ClusterSpec, Link

NETWORK = ipaddress.ip_network("198.18.0.0/16")
ALLOWED = ipaddress.ip_network("198.18.0.0/15")
NS_PREFIX = "mps-"


@dataclasses.dataclass(frozen=True)
class Host:
    index: int
    name: str  # short name: h0, h1, ...
    hostname: str  # UTS name: NAME-h0
    netns: str  # network namespace: mps-NAME-h0
    switch: int
    address: str
    port: str  # the switch's port facing this host


@dataclasses.dataclass(frozen=True)
class Switch:
    index: int
    netns: str
    hosts: tuple


@dataclasses.dataclass(frozen=True)
class Uplink:
    a: int  # switch indices, a < b
    b: int
    port_a: str  # port name in switch a's namespace
    port_b: str


@dataclasses.dataclass(frozen=True)
class PathClass:
    """Extra treatment of packets a host receives from one other switch."""

    hops: int  # uplinks crossed; 0 = same switch
    source: str  # source subnet (CIDR)
    delay_ns: int
    jitter_ns: int
    loss: float  # extra drop probability for this class (beyond the link's own)


@dataclasses.dataclass(frozen=True)
class Plan:
    spec: ClusterSpec
    hosts: tuple
    switches: tuple
    uplinks: tuple

    def netns_names(self):
        return [h.netns for h in self.hosts] + [s.netns for s in self.switches]

    def host(self, ref: str) -> Host | None:
        """A host by short name (h1), host name (NAME-h1), index (1) or address."""
        for h in self.hosts:
            if ref in (h.name, h.hostname, h.address, str(h.index)):
                return h
        return None

    def hops(self, a: Host, b: Host) -> int:
        return abs(a.switch - b.switch)

    def path_classes(self, receiver: Host):
        """How packets arriving at `receiver` are delayed and dropped, by origin.

        Same-switch traffic gets the link's delay; traffic from a switch k
        hops away additionally crosses k uplinks, each adding the uplink's
        delay and loss.
        """
        link, up = self.spec.link, self.spec.uplink or Link()
        classes = [PathClass(0, str(NETWORK), link.delay_ns, link.jitter_ns, 0.0)]
        for sw in self.switches:
            hops = abs(sw.index - receiver.switch)
            if hops == 0:
                continue
            loss = 1 - (1 - up.loss) ** hops
            classes.append(
                PathClass(
                    hops,
                    switch_subnet(sw.index),
                    link.delay_ns + hops * up.delay_ns,
                    link.jitter_ns + hops * up.jitter_ns,
                    loss,
                )
            )
        return classes

    def path(self, a: Host, b: Host) -> dict:
        """Ground truth of the path from a to b, for a run's context."""
        link, up = self.spec.link, self.spec.uplink or Link()
        hops = self.hops(a, b)
        rates = [r for r in [link.rate_bps] + [up.rate_bps] * hops if r is not None]
        return {
            "from": a.hostname,
            "to": b.hostname,
            "uplinks": hops,
            "delay_s": (link.delay_ns + hops * up.delay_ns) / 1e9,
            "loss": 1 - (1 - link.loss) * (1 - up.loss) ** hops,
            "bottleneck_rate_bps": min(rates) if rates else None,
        }


def switch_subnet(k: int) -> str:
    return f"198.18.{k}.0/24"


def host_address(switch: int, position: int) -> str:
    return f"198.18.{switch}.{position + 1}"


def split_hosts(hosts: int, switches: int):
    """Sizes of contiguous host blocks, as even as possible, larger blocks first."""
    base, extra = divmod(hosts, switches)
    return [base + (1 if k < extra else 0) for k in range(switches)]


def plan(spec: ClusterSpec) -> Plan:
    hosts, switches = [], []
    i = 0
    for k, count in enumerate(split_hosts(spec.hosts, spec.switches)):
        members = []
        for j in range(count):
            h = Host(
                index=i,
                name=f"h{i}",
                hostname=f"{spec.name}-h{i}",
                netns=f"{NS_PREFIX}{spec.name}-h{i}",
                switch=k,
                address=host_address(k, j),
                port=f"h{i}",
            )
            hosts.append(h)
            members.append(i)
            i += 1
        switches.append(Switch(index=k, netns=f"{NS_PREFIX}{spec.name}-sw{k}", hosts=tuple(members)))
    uplinks = tuple(Uplink(a=k, b=k + 1, port_a=f"up-sw{k + 1}", port_b=f"up-sw{k}") for k in range(spec.switches - 1))
    for h in hosts:
        assert ipaddress.ip_address(h.address) in ALLOWED
    return Plan(spec=spec, hosts=tuple(hosts), switches=tuple(switches), uplinks=uplinks)


def ours(netns_name: str, cluster: str | None = None) -> bool:
    """True for a namespace this package creates (of `cluster`, when given)."""
    if cluster is None:
        return netns_name.startswith(NS_PREFIX)
    prefix = f"{NS_PREFIX}{cluster}-"
    rest = netns_name[len(prefix) :]
    return netns_name.startswith(prefix) and (rest[:1] == "h" or rest[:2] == "sw") and rest.lstrip("hsw").isdigit()
