# SPDX-License-Identifier: BSD-3-Clause
"""What an emulated cluster looks like: link specs, presets, validation (pure,
tested without root). A link spec is a comma list of key=value:

    rate=100mbit  line rate (bit, kbit, mbit, gbit; decimal as in tc); omitted = unshaped
    delay=50us    one-way delay added on the path (ns, us, ms, s)
    jitter=10us   uniform +- jitter on top of the delay (per-flow order is kept)
    loss=0.1%     probability that a packet is dropped
    queue=64K     each shaped port's buffer, bytes (B/K/M) or time at the rate (ms);
                  default: 20 ms at the rate, at least 64 KiB
    mtu=9000      frame payload size of every interface (host links only; default 1500)"""

from __future__ import annotations

import dataclasses
import re

from mpiscope.common.errors import UsageError

# Bytes an Ethernet frame occupies on the wire beyond its IP packet:
# header 14, FCS 4, preamble + start delimiter 8, inter-frame gap 12.
ETH_HEADER = 14
ETH_WIRE_EXTRA = 4 + 8 + 12  # what tc's size table adds to each frame (skb holds the header)
ETH_OVERHEAD = ETH_HEADER + ETH_WIRE_EXTRA
IP_TCP_HEADERS = 20 + 20 + 12  # IPv4, TCP, TCP timestamp option (on by default in Linux)
DEFAULT_MTU = 1500
DEFAULT_QUEUE_S = 0.020
MIN_QUEUE_BYTES = 64 * 1024

NAME_RE = re.compile(r"^[a-z][a-z0-9-]{0,19}$")
MAX_HOSTS_PER_SWITCH = 250
MAX_SWITCHES = 64

_RATE_UNITS = {"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12}
_TIME_UNITS = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
_BYTE_UNITS = {"": 1, "b": 1, "k": 1024, "kb": 1024, "kib": 1024, "m": 1024**2, "mb": 1024**2, "mib": 1024**2}
_NUM = r"(\d+(?:\.\d*)?|\.\d+)"


@dataclasses.dataclass(frozen=True)
class Link:
    """Parameters of one kind of link. Times in ns, rate in bit/s, loss a fraction."""

    rate_bps: float | None = None
    delay_ns: int = 0
    jitter_ns: int = 0
    loss: float = 0.0
    queue_bytes: int | None = None  # None: the default for the rate
    queue_ns: int | None = None  # a queue given as time at the rate
    mtu: int | None = None

    def queue_limit(self) -> int:
        """Buffer of a shaped port in bytes."""
        if self.queue_bytes is not None:
            return self.queue_bytes
        if self.rate_bps is None:
            return MIN_QUEUE_BYTES
        seconds = self.queue_ns / 1e9 if self.queue_ns is not None else DEFAULT_QUEUE_S
        return max(MIN_QUEUE_BYTES, int(self.rate_bps / 8 * seconds))

    def describe(self) -> dict:
        """JSON-friendly ground truth, units in the key names."""
        d = {"rate_bps": self.rate_bps, "delay_s": self.delay_ns / 1e9, "loss": self.loss}
        if self.jitter_ns:
            d["jitter_s"] = self.jitter_ns / 1e9
        if self.rate_bps is not None:
            d["queue_bytes"] = self.queue_limit()
        return d

    def to_text(self) -> str:
        """The spec back as text (what `cluster list` shows)."""
        parts = []
        if self.rate_bps is not None:
            parts.append(f"rate={format_rate(self.rate_bps)}")
        if self.delay_ns:
            parts.append(f"delay={format_time(self.delay_ns)}")
        if self.jitter_ns:
            parts.append(f"jitter={format_time(self.jitter_ns)}")
        if self.loss:
            parts.append(f"loss={self.loss * 100:g}%")
        if self.queue_bytes is not None:
            parts.append(f"queue={self.queue_bytes}")
        elif self.queue_ns is not None:
            parts.append(f"queue={format_time(self.queue_ns)}")
        if self.mtu is not None:
            parts.append(f"mtu={self.mtu}")
        return ",".join(parts) or "unshaped"


def format_rate(bps: float) -> str:
    for unit, factor in (("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3)):
        if bps >= factor and (bps / factor) == int(bps / factor):
            return f"{int(bps / factor)}{unit}"
    return f"{int(bps)}bit"


def format_time(ns: int) -> str:
    for unit, factor in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns >= factor and ns % factor == 0:
            return f"{ns // factor}{unit}"
    if ns >= 1000:
        return f"{ns / 1000:g}us"
    return f"{ns}ns"


def parse_rate(text: str, what="rate") -> float:
    m = re.fullmatch(_NUM + r"\s*([a-zA-Z]*)", text.strip())
    unit = m and _RATE_UNITS.get(m.group(2).lower())
    if not m or not unit:
        raise UsageError(f"{what}: '{text}' is not a rate; write e.g. 100mbit, 1gbit, 500kbit")
    value = float(m.group(1)) * unit
    if value < 8000:
        raise UsageError(f"{what}: {text} is too slow; the smallest rate is 8kbit")
    return value


def parse_time(text: str, what="delay") -> int:
    text = text.strip()
    if text in ("0", "0.0"):
        return 0
    m = re.fullmatch(_NUM + r"\s*([a-zA-Z]*)", text)
    unit = m and _TIME_UNITS.get(m.group(2).lower())
    if not m or not unit:
        raise UsageError(f"{what}: '{text}' is not a time; write e.g. 50us, 1.5ms (units ns, us, ms, s)")
    ns = round(float(m.group(1)) * unit)
    if ns > 10 * 10**9:
        raise UsageError(f"{what}: {text} is more than 10 s")
    return ns


def parse_loss(text: str) -> float:
    text = text.strip()
    if text in ("0", "0.0"):
        return 0.0
    m = re.fullmatch(_NUM + r"\s*%", text)
    if not m:
        raise UsageError(f"loss: '{text}' is not a percentage; write e.g. loss=0.1% or loss=2%")
    value = float(m.group(1)) / 100
    if value >= 1:
        raise UsageError(f"loss: {text} would drop every packet; give less than 100%")
    return value


def _parse_queue(text: str):
    """Returns (bytes or None, ns or None)."""
    m = re.fullmatch(r"(\d+)\s*([a-zA-Z]*)", text.strip())
    if m and m.group(2).lower() in _BYTE_UNITS:
        value = int(m.group(1)) * _BYTE_UNITS[m.group(2).lower()]
        if value < 4096:
            raise UsageError(f"queue: {text} is smaller than the 4 KiB a port needs for a few frames")
        return value, None
    try:
        ns = parse_time(text, "queue")
    except UsageError:
        raise UsageError(f"queue: '{text}' is neither bytes (64K, 1M) nor a time at the rate (20ms)") from None
    if ns <= 0:
        raise UsageError("queue: a queue of 0 would drop everything")
    return None, ns


_KEYS = ("rate", "delay", "jitter", "loss", "queue", "mtu")


def parse_link(text: str, what="--link", base: Link | None = None) -> Link:
    """Parses `rate=100mbit,delay=50us,loss=0.1%`; keys not given keep `base`'s values."""
    fields = dataclasses.asdict(base or Link())
    if text is None or not text.strip():
        raise UsageError(f"{what} is empty; write e.g. {what} rate=100mbit,delay=50us,loss=0.1%")
    seen = set()
    for item in text.split(","):
        key, eq, value = item.partition("=")
        key = key.strip().lower()
        if not eq or key not in _KEYS:
            raise UsageError(f"{what}: '{item.strip()}' is not key=value with a key among {', '.join(_KEYS)}")
        if key in seen:
            raise UsageError(f"{what}: {key} is given twice")
        seen.add(key)
        try:
            if key == "rate":
                fields["rate_bps"] = None if value.strip() in ("none", "unshaped") else parse_rate(value)
            elif key == "delay":
                fields["delay_ns"] = parse_time(value, "delay")
            elif key == "jitter":
                fields["jitter_ns"] = parse_time(value, "jitter")
            elif key == "loss":
                fields["loss"] = parse_loss(value)
            elif key == "queue":
                fields["queue_bytes"], fields["queue_ns"] = _parse_queue(value)
            elif key == "mtu":
                if not value.strip().isdigit() or not 576 <= int(value) <= 9000:
                    raise UsageError(f"mtu: '{value}' must be a number of bytes from 576 to 9000")
                fields["mtu"] = int(value)
        except UsageError as e:
            raise UsageError(f"{what}: {e}") from None
    link = Link(**fields)
    if link.jitter_ns > link.delay_ns:
        raise UsageError(
            f"{what}: jitter ({format_time(link.jitter_ns)}) is larger than the delay "
            f"({format_time(link.delay_ns)}); a packet cannot leave before it arrived"
        )
    return link


@dataclasses.dataclass(frozen=True)
class Preset:
    description: str
    link: str
    switches: int = 1
    uplink: str | None = None


PRESETS = {
    "fast-ethernet": Preset(
        "100 Mbit/s Ethernet, every host on one switch (as in Hamid (2008), chapter 5)", "rate=100mbit"
    ),
    "gige": Preset("1 Gbit/s Ethernet, every host on one switch", "rate=1gbit"),
    "two-switch": Preset(
        "100 Mbit/s hosts on two switches joined by one 100 Mbit/s uplink: traffic between the switches shares it",
        "rate=100mbit",
        switches=2,
        uplink="rate=100mbit",
    ),
}


@dataclasses.dataclass(frozen=True)
class ClusterSpec:
    name: str
    hosts: int
    slots: int
    switches: int
    link: Link
    uplink: Link | None
    preset: str | None = None

    @property
    def mtu(self) -> int:
        return self.link.mtu or DEFAULT_MTU

    def describe(self) -> dict:
        return {
            "hosts": self.hosts,
            "slots": self.slots,
            "switches": self.switches,
            "preset": self.preset,
            "mtu": self.mtu,
            "link": self.link.describe(),
            "link_text": self.link.to_text(),
            "uplink": self.uplink.describe() if self.uplink else None,
            "uplink_text": self.uplink.to_text() if self.uplink else None,
        }


def check_name(name: str) -> str:
    if not NAME_RE.fullmatch(name or ""):  # fullmatch: '$' alone lets "name\n" through
        raise UsageError(
            f"cluster name {name!r} must start with a lower-case letter and have at most 20 letters, digits or '-'"
        )
    return name


def make_spec(name, hosts, slots=1, link=None, switches=None, uplink=None, preset=None) -> ClusterSpec:
    """Validates what `cluster up` was given; raises UsageError."""
    check_name(name)
    base_link, base_uplink, base_switches = Link(), None, 1
    if preset is not None:
        if preset not in PRESETS:
            raise UsageError(f"--preset: unknown preset '{preset}'; choose from {', '.join(PRESETS)}")
        p = PRESETS[preset]
        base_link = parse_link(p.link, "--preset")
        base_uplink = parse_link(p.uplink, "--preset") if p.uplink else None
        base_switches = p.switches
    link_ = parse_link(link, "--link", base_link) if link is not None else base_link
    switches_ = base_switches if switches is None else switches
    if hosts is None or hosts < 2:
        raise UsageError(f"--hosts must be at least 2, got {hosts}")
    if slots is None or slots < 1:
        raise UsageError(f"--slots must be at least 1, got {slots}")
    if not 1 <= switches_ <= MAX_SWITCHES:
        raise UsageError(f"--switches must be from 1 to {MAX_SWITCHES}, got {switches_}")
    if switches_ > hosts:
        raise UsageError(f"--switches {switches_} is more than --hosts {hosts}: a switch would have no host")
    if -(-hosts // switches_) > MAX_HOSTS_PER_SWITCH:
        raise UsageError(f"at most {MAX_HOSTS_PER_SWITCH} hosts per switch; add --switches")
    if uplink is not None:
        if switches_ < 2:
            raise UsageError("--uplink joins switches; give --switches 2 or more")
        uplink_ = parse_link(uplink, "--uplink", base_uplink or Link())
    else:
        uplink_ = base_uplink if switches_ > 1 else None
    if uplink_ is not None and uplink_.mtu is not None:
        raise UsageError("--uplink: mtu is set for the whole cluster with --link mtu=…")
    if switches_ > 1 and uplink_ is None:
        uplink_ = Link()  # an unshaped uplink
    return ClusterSpec(
        name=name, hosts=hosts, slots=slots, switches=switches_, link=link_, uplink=uplink_, preset=preset
    )


def payload_rate(rate_bps: float, mtu: int = DEFAULT_MTU) -> float:
    """TCP payload bytes per second a saturated Ethernet link of `rate_bps` carries.

    Each full frame carries mtu - 52 bytes of payload (IPv4, TCP and its
    timestamp option) and occupies mtu + 38 bytes of line time (Ethernet
    header, FCS, preamble, inter-frame gap). For 100 Mbit/s and MTU 1500:
    1448/1538 of 12.5 MB/s = 11.77 MB/s.
    """
    return rate_bps / 8 * (mtu - IP_TCP_HEADERS) / (mtu + ETH_OVERHEAD)
