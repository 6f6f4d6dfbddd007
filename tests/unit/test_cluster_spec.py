# SPDX-License-Identifier: BSD-3-Clause
"""Emulated cluster planning without root: link specs, presets, addresses, rules."""

import ipaddress

import pytest

from mpiscope.cluster import launching, shaping
from mpiscope.cluster.spec import (ETH_OVERHEAD, Link, PRESETS, make_spec, parse_link, payload_rate)
from mpiscope.cluster.topology import ALLOWED, ours, plan, split_hosts
from mpiscope.common.errors import UsageError


def test_link_spec_units():
    link = parse_link("rate=100mbit,delay=50us,loss=0.1%")
    assert link.rate_bps == 100e6 and link.delay_ns == 50_000 and link.loss == pytest.approx(0.001)
    assert parse_link("rate=1gbit").rate_bps == 1e9
    assert parse_link("rate=1.5Mbit").rate_bps == 1.5e6
    assert parse_link("delay=1.5ms").delay_ns == 1_500_000
    assert parse_link("delay=0,loss=0").delay_ns == 0
    assert parse_link("delay=100us,jitter=20us").jitter_ns == 20_000
    assert parse_link("queue=256K").queue_bytes == 256 * 1024
    assert parse_link("rate=10mbit,queue=10ms").queue_limit() == 64 * 1024  # 12.5 KB < floor
    assert parse_link("rate=1gbit,queue=10ms").queue_limit() == 1_250_000
    assert parse_link("mtu=9000").mtu == 9000


def test_link_spec_round_trips_as_text():
    text = "rate=100mbit,delay=50us,jitter=5us,loss=2%,queue=65536,mtu=9000"
    assert parse_link(text).to_text() == text
    assert Link().to_text() == "unshaped"


@pytest.mark.parametrize("text, needle", [
    ("rate=100", "not a rate"),
    ("rate=100mbps", "not a rate"),
    ("rate=1kbit", "too slow"),
    ("delay=50", "not a time"),
    ("delay=50 parsecs", "not a time"),
    ("loss=2", "not a percentage"),
    ("loss=100%", "every packet"),
    ("speed=1gbit", "key=value"),
    ("rate", "key=value"),
    ("rate=1gbit,rate=2gbit", "given twice"),
    ("delay=10us,jitter=20us", "jitter"),
    ("queue=12", "4 KiB"),
    ("queue=soon", "neither bytes"),
    ("mtu=100000", "576 to 9000"),
    ("", "empty"),
])
def test_bad_link_specs(text, needle):
    with pytest.raises(UsageError, match=needle):
        parse_link(text)


def test_presets_and_overrides():
    fe = make_spec("fe", 4, preset="fast-ethernet")
    assert fe.link.rate_bps == 100e6 and fe.switches == 1 and fe.uplink is None
    two = make_spec("ts", 4, preset="two-switch")
    assert two.switches == 2 and two.uplink.rate_bps == 100e6
    # --link overrides single keys of the preset, keeping the others
    lossy = make_spec("fe", 2, link="loss=2%", preset="fast-ethernet")
    assert lossy.link.rate_bps == 100e6 and lossy.link.loss == pytest.approx(0.02)
    slow_up = make_spec("ts", 4, uplink="delay=1ms", preset="two-switch")
    assert slow_up.uplink.rate_bps == 100e6 and slow_up.uplink.delay_ns == 1_000_000
    assert set(PRESETS) == {"fast-ethernet", "gige", "two-switch"}


@pytest.mark.parametrize("kwargs, needle", [
    (dict(name="Big", hosts=2), "lower-case"),
    (dict(name="a" * 21, hosts=2), "at most 20"),
    (dict(name="x", hosts=1), "--hosts must be at least 2"),
    (dict(name="x", hosts=2, slots=0), "--slots"),
    (dict(name="x", hosts=2, switches=3), "a switch would have no host"),
    (dict(name="x", hosts=4, uplink="rate=1gbit"), "--switches 2 or more"),
    (dict(name="x", hosts=4, switches=2, uplink="mtu=9000"), "whole cluster"),
    (dict(name="x", hosts=4, preset="infiniband"), "unknown preset"),
])
def test_bad_cluster_specs(kwargs, needle):
    with pytest.raises(UsageError, match=needle):
        make_spec(**kwargs)


def test_payload_rate_of_fast_ethernet():
    # 1448 payload bytes per 1538 bytes of line time (MTU 1500, TCP timestamps)
    assert payload_rate(100e6) == pytest.approx(100e6 / 8 * 1448 / 1538)
    assert payload_rate(100e6) == pytest.approx(11.7685e6, rel=1e-4)
    assert payload_rate(1e9, mtu=9000) == pytest.approx(1e9 / 8 * 8948 / 9038)


def test_split_hosts_is_even_and_contiguous():
    assert split_hosts(4, 2) == [2, 2]
    assert split_hosts(5, 2) == [3, 2]
    assert split_hosts(7, 3) == [3, 2, 2]
    p = plan(make_spec("c", 5, switches=2))
    assert [h.switch for h in p.hosts] == [0, 0, 0, 1, 1]
    assert [s.hosts for s in p.switches] == [(0, 1, 2), (3, 4)]


def test_addresses_and_names():
    p = plan(make_spec("lab", 6, switches=3))
    addrs = [h.address for h in p.hosts]
    assert addrs == ["198.18.0.1", "198.18.0.2", "198.18.1.1", "198.18.1.2", "198.18.2.1",
                     "198.18.2.2"]
    assert all(ipaddress.ip_address(a) in ALLOWED for a in addrs)
    assert len(set(addrs)) == len(addrs)
    assert [h.hostname for h in p.hosts][:2] == ["lab-h0", "lab-h1"]
    assert p.netns_names() == [f"mps-lab-h{i}" for i in range(6)] + \
        ["mps-lab-sw0", "mps-lab-sw1", "mps-lab-sw2"]
    assert [(u.a, u.b) for u in p.uplinks] == [(0, 1), (1, 2)]
    assert p.host("h3") is p.host("lab-h3") is p.host("198.18.1.2") is p.hosts[3]
    assert p.host("h9") is None
    assert all(ours(n, "lab") for n in p.netns_names())
    assert not ours("mps-lab-h1-h0", "lab") and not ours("mps-labx-h0", "lab")
    assert not ours("other-h0")


def test_paths_add_uplink_delay_and_loss_per_hop():
    spec = make_spec("c", 6, switches=3, link="rate=100mbit,delay=50us,loss=1%",
                     uplink="rate=10mbit,delay=100us,loss=2%")
    p = plan(spec)
    near = p.path(p.hosts[0], p.hosts[1])
    far = p.path(p.hosts[0], p.hosts[5])
    assert near["uplinks"] == 0 and near["delay_s"] == pytest.approx(50e-6)
    assert near["loss"] == pytest.approx(0.01) and near["bottleneck_rate_bps"] == 100e6
    assert far["uplinks"] == 2 and far["delay_s"] == pytest.approx(250e-6)
    assert far["loss"] == pytest.approx(1 - 0.99 * 0.98 ** 2)
    assert far["bottleneck_rate_bps"] == 10e6
    classes = {c.hops: c for c in p.path_classes(p.hosts[0])}
    assert set(classes) == {0, 1, 2}
    assert classes[2].source == "198.18.2.0/24" and classes[2].delay_ns == 250_000


def test_filter_rules_drop_before_delay_and_only_from_eth0():
    spec = make_spec("c", 4, switches=2, link="delay=50us,loss=1%", uplink="delay=100us")
    p = plan(spec)
    rules = [" ".join(r) for r in shaping.filter_rules(p, p.hosts[0])]
    assert "-A PREROUTING -i eth0 -j MPISCOPE" in rules[1]
    drop = [i for i, r in enumerate(rules) if "-j DROP" in r]
    queue = [i for i, r in enumerate(rules) if "NFQUEUE" in r]
    assert drop and queue and max(drop) < min(queue)
    assert "--probability 0.01" in rules[drop[0]]
    # the other switch's queue (1) comes before the catch-all same-switch queue (0)
    assert "-s 198.18.1.0/24 -j NFQUEUE --queue-num 1" in rules[queue[0]]
    assert rules[queue[-1]].endswith("-s 198.18.0.0/16 -j NFQUEUE --queue-num 0")
    assert shaping.delay_queues(p)[0][1:] == (0, 50_000, 0, 0)
    # a cluster with neither rate, loss nor delay has no rules at all
    assert shaping.filter_rules(plan(make_spec("c", 2, link="mtu=1500")), p.hosts[0]) == []


def test_a_shaped_host_link_holds_what_each_host_sends_for_its_wire_time():
    p = plan(make_spec("c", 4, switches=2, link="rate=100mbit"))
    rules = [" ".join(r) for r in shaping.filter_rules(p, p.hosts[0])]
    # no delay: nothing arriving is held, what leaves by eth0 goes to the egress queue
    assert rules == [f"iptables -w -t raw -A OUTPUT -o eth0 -j NFQUEUE --queue-num {shaping.EGRESS_QUEUE}"]
    assert [q[1:] for q in shaping.delay_queues(p)] == [(shaping.EGRESS_QUEUE, 0, 0, 100_000_000)] * 4
    # with a delay, arriving packets are held for it, without a rate
    p = plan(make_spec("c", 2, link="rate=100mbit,delay=20us"))
    assert {q[1:] for q in shaping.delay_queues(p)} == {(shaping.EGRESS_QUEUE, 0, 0, 100_000_000), (0, 20_000, 0, 0)}


def test_rate_limits_shape_both_directions_of_every_link():
    spec = make_spec("c", 4, switches=2, link="rate=100mbit", uplink="rate=10mbit")
    cmds = [" ".join(c) for c in shaping.rate_limits(plan(spec))]
    assert len(cmds) == 4 * 2 + 1 * 2
    assert all("stab overhead 24" in c and " tbf rate " in c for c in cmds)
    assert sum("rate 10000000bit" in c for c in cmds) == 2
    assert any(c.startswith("tc -n mps-c-h0 qdisc replace dev eth0") for c in cmds)
    assert any(c.startswith("tc -n mps-c-sw0 qdisc replace dev h0") for c in cmds)


def test_wiring_creates_links_inside_the_namespaces():
    cmds = shaping.wiring(plan(make_spec("c", 4, switches=2)))
    adds = [c for c in cmds if c[:3] == ["ip", "link", "add"]]
    assert len(adds) == 4 + 1
    # both ends of every veth are created directly inside our namespaces
    for c in adds:
        assert c.count("netns") == 2 and all(c[i + 1].startswith("mps-c-")
                                              for i, w in enumerate(c) if w == "netns")
    # GSO stays on (cheap), except with loss: a drop must take one frame, not a burst
    assert not any("gso_max_segs" in c for c in cmds)
    lossy = shaping.wiring(plan(make_spec("c", 4, switches=2, uplink="loss=1%")))
    assert sum("gso_max_segs" in c for c in lossy) == 4


def test_rsh_script_and_hostfiles(tmp_path):
    p = plan(make_spec("c", 3, slots=2))
    script = launching.rsh_script(p, tmp_path)
    assert "h1|c-h1|198.18.0.2) ns=mps-c-h1" in script
    assert 'set -- /bin/sh -c "$*"' in script  # ssh semantics: words joined, run by a shell
    hosts = launching.hosts_file(p)
    assert "198.18.0.3\tc-h2 h2" in hosts
    assert [h.name for h in launching.placement(p, 5)] == ["h0", "h0", "h1", "h1", "h2"]
    truth = launching.ground_truth(p, 3)
    assert truth["placement"] == ["c-h0", "c-h0", "c-h1"]
    assert truth["paths"] == [{"uplinks": 0, "delay_s": 0.0, "loss": 0.0,
                               "bottleneck_rate_bps": None}]


@pytest.mark.parametrize("rate", [10e6, 100e6, 1e9, 10e9])
@pytest.mark.parametrize("mtu", [1500, 9000])
def test_a_shaped_ports_bucket_holds_one_frame_to_tcs_microsecond(rate, mtu):
    depth = shaping.one_frame(rate, mtu)
    frame = mtu + ETH_OVERHEAD
    # tc keeps the depth in whole microseconds and the kernel in 64 ns ticks: a full
    # frame must still fit after both roundings, and nothing beyond the next microsecond
    whole_us = int(depth * 8 / rate * 1e6)
    kernel_ticks = int(whole_us * 1000 / 64)
    assert kernel_ticks * 64e-9 * rate / 8 >= frame
    assert depth * 8 / rate <= frame * 8 / rate + 64e-9 + 1e-6 + 8 / rate
    cmd = shaping.tbf("ns", "eth0", Link(rate_bps=rate), mtu, 1)
    assert cmd[cmd.index("burst") + 1] == str(depth)
