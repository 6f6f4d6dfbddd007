# SPDX-License-Identifier: BSD-3-Clause
"""The minimum TCP retransmission timeout (RTO_min) of this host.

Linux retransmits after RTO = SRTT + max(4·RTTVAR, RTO_min); on a cluster
network a lost segment costs about RTO_min, 200 ms by default, doubling at each
further loss. A route can lower it (`ip route change ... rto_min 5ms`), and
Linux 6.11+ has the sysctl net.ipv4.tcp_rto_min_us. Where the value came from is
returned with it: `mpiscope run` reads it on the measured hosts into the run's
context; otherwise the analysis reads it on the host running it."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

LINUX_DEFAULT_S = 0.2
SYSCTL_PATH = Path("/proc/sys/net/ipv4/tcp_rto_min_us")

_RTO_MIN = re.compile(r"\brto_min\s+(?:lock\s+)?([0-9]*\.?[0-9]+)\s*(us|usec|ms|msec|s|sec|secs)?\b")
_UNIT = {"us": 1e-6, "usec": 1e-6, "ms": 1e-3, "msec": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0}


def parse_ip_route(text: str) -> list[float]:
    """Every rto_min in `ip route show` output, in seconds (no unit: ms, as
    ip-route(8) reads it)."""
    out = []
    for m in _RTO_MIN.finditer(text):
        out.append(float(m.group(1)) * _UNIT[m.group(2) or "ms"])
    return out


def _read_ip_route():
    ip = shutil.which("ip")
    if ip is None:
        return None
    try:
        res = subprocess.run(
            [ip, "route", "show", "table", "all"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return res.stdout if res.returncode == 0 else None


def _read_sysctl():
    try:
        return SYSCTL_PATH.read_text()
    except OSError:
        return None


def rto_min(ip_route_text: str | None = None, sysctl_text: str | None = None, read_system: bool = True) -> dict:
    """{"rto_min_s", "source", "values_s"}: the smallest rto_min of any route,
    else the tcp_rto_min_us sysctl, else Linux's default of 200 ms.

    The texts can be given (tests, or values recorded on the measured
    hosts); with read_system the missing ones are read from this host.
    """
    if ip_route_text is None and read_system:
        ip_route_text = _read_ip_route()
    values = parse_ip_route(ip_route_text) if ip_route_text else []
    if values:
        return {
            "rto_min_s": min(values),
            "values_s": sorted(set(values)),
            "source": "ip route show table all (smallest rto_min of a route)",
        }
    if sysctl_text is None and read_system:
        sysctl_text = _read_sysctl()
    if sysctl_text and sysctl_text.strip().isdigit():
        us = int(sysctl_text.strip())
        return {"rto_min_s": us / 1e6, "values_s": [us / 1e6], "source": f"sysctl net.ipv4.tcp_rto_min_us = {us}"}
    return {
        "rto_min_s": LINUX_DEFAULT_S,
        "values_s": [LINUX_DEFAULT_S],
        "source": "Linux default TCP_RTO_MIN (200 ms): no rto_min found on this host",
    }


def across_hosts(per_host: dict) -> dict:
    """A run's RTO_min from rto_min()'s dicts read on its hosts at run time
    ({hostname: dict}): the smallest, since a retransmission on that host is
    the first to show as a mode; every host's value is kept with it."""
    host = min(per_host, key=lambda h: per_host[h]["rto_min_s"])
    return {
        "rto_min_s": per_host[host]["rto_min_s"],
        "source": f"read at run time on the measured hosts (smallest: {host}, {per_host[host]['source']})",
        "per_host": per_host,
    }


def as_rto(rto) -> dict:
    """{"rto_min_s", "source"} from seconds, from rto_min()'s dict, or from
    None (Linux's default, not read from this host)."""
    if rto is None:
        return {"rto_min_s": LINUX_DEFAULT_S, "source": "Linux default TCP_RTO_MIN (200 ms): none given"}
    if isinstance(rto, (int, float)):
        return {"rto_min_s": float(rto), "source": "given"}
    out = dict(rto)
    out["rto_min_s"] = float(rto["rto_min_s"])
    out.setdefault("source", "given")
    return out
