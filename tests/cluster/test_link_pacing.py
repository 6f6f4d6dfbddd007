# SPDX-License-Identifier: BSD-3-Clause
"""Emulated links pace like wires (root): every shaped port's token bucket is
one frame deep and lets full frames through, and the delay program charges
each frame a host sends its wire time at the host link's rate. Configuration
and counters only: how close the times come is bench/cluster_links.py's."""

import os
import re
import subprocess

import pytest

from mpiscope.cluster import delay_report, manager
from mpiscope.cluster import state as st
from mpiscope.cluster.spec import ETH_OVERHEAD, make_spec
from mpiscope.cluster.topology import plan as make_plan
from tcp_stream import STREAM

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="emulated clusters need root")

RATE = 100e6
TC_RESOLUTION_S = 1e-6      # tc states a bucket's depth in whole microseconds at the rate
_SIZE_UNITS = {"b": 1, "Kb": 1024, "Mb": 1024 ** 2}


def _port(netns, dev):
    """(kind, bucket depth in bytes, packets sent, packets dropped) of a port's root qdisc."""
    text = subprocess.run(["tc", "-n", netns, "-s", "qdisc", "show", "dev", dev],
                          capture_output=True, text=True, check=True).stdout
    kind = text.split()[1]
    depth = re.search(r"burst (\d+(?:\.\d+)?)(b|Kb|Mb)", text)
    sent, dropped = re.search(r"Sent \d+ bytes (\d+) pkt \(dropped (\d+)", text).groups()
    return kind, float(depth[1]) * _SIZE_UNITS[depth[2]], int(sent), int(dropped)


def test_every_shaped_port_sends_at_most_one_frame_ahead_and_every_frame_pays_its_wire_time():
    spec = make_spec(f"p{os.getpid() % 100000}", 2, link="rate=100mbit")
    plan = make_plan(spec)
    manager.up(spec)
    try:
        rsh = str(st.cluster_dir(spec.name) / "rsh")
        recv = subprocess.Popen([rsh, "--argv", "h1", "python3", "-c", STREAM, "recv"],
                                stdout=subprocess.PIPE, text=True)
        assert recv.stdout.readline().strip() == "listening"
        sent = int(subprocess.run([rsh, "--argv", "h0", "python3", "-c", STREAM, "send",
                                   f"{spec.name}-h1"], check=True, timeout=30,
                                  capture_output=True, text=True).stdout)
        assert int(recv.stdout.readline()) == sent > 0
        recv.wait(timeout=10)
        ports = [(h.netns, "eth0") for h in plan.hosts] + \
                [(plan.switches[h.switch].netns, h.port) for h in plan.hosts]
        shaped = {p: _port(*p) for p in ports}
        report = delay_report(spec.name)
    finally:
        manager.teardown(spec.name)
    frame = spec.mtu + ETH_OVERHEAD
    slack = RATE / 8 * TC_RESOLUTION_S
    for port, (kind, depth, packets, dropped) in shaped.items():
        # one full frame deep, to tc's resolution: no burst beyond one frame ...
        assert kind == "tbf" and abs(depth - frame) <= slack, (port, depth, frame)
        # ... yet deep enough for a full frame: the stream's frames all passed
        assert packets > 0 and dropped == 0, (port, packets, dropped)
    # Every frame a host sends waits in the delay program for its wire time at the host
    # link's rate, in both directions (a GSO packet once for all its frames), and none
    # was let go before it was due.
    queues = [q for q in report["detail"]["queues"] if q["packets"]]
    assert len(queues) == 2 and all(q["rate_bps"] == RATE for q in queues), queues
    assert all(q["frames"] >= q["packets"] for q in queues), queues
    assert sum(q["frames"] for q in queues) > sent / spec.mtu, report["summary"]
    assert all(q["verdict_errors"] == 0 and q["error_min_ns"] >= -100_000 for q in queues), queues
