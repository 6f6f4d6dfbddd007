# SPDX-License-Identifier: BSD-3-Clause
"""Hostfiles: read the forms 'HOST slots=N', 'HOST:N' and plain (a host a
line, Slurm's SLURM_HOSTFILE too) into (host, slots) pairs, and write each
form. Which form a launcher reads, it says itself (mpilibs/launcher.py).
Standard library only.
"""

from __future__ import annotations

import re
import socket

from mpiscope.common.errors import UsageError

# The forms a hostfile is written in (each launcher names the one it reads): what
# users call each, and who reads it.
FORMS = {
    "slots": ("Open MPI syntax", "Open MPI's mpirun reads 'HOST slots=N'"),
    "colon": ("MPICH syntax", "MPICH's mpiexec reads 'HOST:N'"),
    "ranks": ("Slurm's", "srun reads one 'HOST' line per rank"),
}
# Open MPI keys that change nothing mpiscope decides (it never exceeds a host's slots
# unless the ranks outnumber them all).
IGNORED_KEYS = ("max_slots", "max-slots")
# A host name (RFC 1123 labels, '_' tolerated), an IPv4 or an IPv6 address: what
# a launcher can resolve. Anything else it rejects with a parse error of its own.
_HOST = re.compile(r"[A-Za-z0-9_]([A-Za-z0-9_.-]{0,252})|\[?[0-9A-Fa-f:.]+(%\w+)?\]?")


def parse(text: str, source: str = "hostfile", form=None) -> list[tuple[str, int]]:
    """(host, slots) in the order hosts first appear; a host listed again adds
    its slots (a plain line is one slot, as Open MPI and Slurm count it).
    `form` ("slots" or "colon"): the file goes as it is to a launcher that
    reads that form (--launcher-args), so a line in the other form is refused."""
    hosts: dict[str, int] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        fields = raw.split("#", 1)[0].split()
        if not fields:
            continue
        host, slots = fields[0], 1
        if host.count(":") == 1:  # host:N (an IPv6 address has several colons)
            if form == "slots":
                raise _other_form(source, lineno, raw, "colon", form)
            host, count = host.split(":")
            slots = _count(count, source, lineno, raw)
        for field in fields[1:]:
            key, eq, value = field.partition("=")
            if form == "colon" and eq:
                raise _other_form(source, lineno, raw, "slots", form)
            if key == "slots" and eq:
                slots = _count(value, source, lineno, raw)
            elif key not in IGNORED_KEYS or not eq:
                raise UsageError(
                    f"{source}:{lineno}: cannot read '{raw.strip()}': expected "
                    f"'HOST', 'HOST slots=N' (Open MPI) or 'HOST:N' (MPICH)"
                )
        if not host:
            raise UsageError(f"{source}:{lineno}: no host name in '{raw.strip()}'")
        if not _HOST.fullmatch(host):
            raise UsageError(
                f"{source}:{lineno}: '{host}' is not a host name or address; write "
                f"one host a line: 'HOST', 'HOST slots=N' or 'HOST:N'"
            )
        hosts[host] = hosts.get(host, 0) + slots
    if not hosts:
        raise UsageError(f"{source} lists no hosts")
    return list(hosts.items())


def _other_form(source, lineno, raw, written, form) -> UsageError:
    return UsageError(f"{source}:{lineno}: '{raw.strip()}' is {FORMS[written][0]}; {FORMS[form][1]}")


def read(path, what="--hostfile", form=None):
    """parse() of the file at `path`, refused in one line when it cannot be read."""
    from mpiscope.common.inputs import HOSTFILE_LIMIT, read_text

    text = read_text(path, HOSTFILE_LIMIT, what, "give a hostfile of one host a line")
    return parse(text, str(path), form)


def named_in(words, options):
    """The hostfiles that launcher words (--launcher-args) name by one of `options`."""
    found = []
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        if name in options:
            if eq:
                found.append(value)
            elif i + 1 < len(words):
                found.append(words[i + 1])
    return found


def _count(text, source, lineno, raw):
    if not (text.isascii() and text.isdigit()) or int(text) < 1:  # the launcher reads 0-9 only
        raise UsageError(f"{source}:{lineno}: the slot count in '{raw.strip()}' must be a positive integer")
    return int(text)


def select(hosts, nodes=None, ppn=None):
    """The first `nodes` hosts (all by default), each with `ppn` slots when given."""
    if nodes is not None and nodes > len(hosts):
        raise UsageError(f"-N/--nodes {nodes}: the hostfile lists only {len(hosts)} host(s)")
    return [(h, ppn or slots) for h, slots in hosts[:nodes]]


def place(hosts, np: int) -> list[str]:
    """The host of every rank: each host's slots filled in order, and again
    from the first host when the ranks outnumber the slots."""
    order = [h for h, slots in hosts for _ in range(slots)]
    return [order[r % len(order)] for r in range(np)]


def render(form: str, hosts, np: int) -> str:
    """The hostfile text in `form` (FORMS): 'host slots=N', 'host:N', or one
    line per rank (Slurm's SLURM_HOSTFILE with --distribution=arbitrary)."""
    if form == "slots":
        return "".join(f"{h} slots={n}\n" for h, n in hosts)
    if form == "colon":
        return "".join(f"{h}:{n}\n" for h, n in hosts)
    if form == "ranks":
        return "".join(f"{h}\n" for h in place(hosts, np))
    raise ValueError(f"unknown hostfile form {form!r}")


def this_host_names() -> set[str]:
    name = socket.gethostname()
    return {"localhost", "127.0.0.1", "::1", name, name.split(".")[0]}


def ranks_here(hosts, np: int) -> int:
    """Ranks the placement puts on this machine (under any of its names)."""
    here = this_host_names()
    return sum(1 for h in place(hosts, np) if h in here)
