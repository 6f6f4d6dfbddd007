# SPDX-License-Identifier: BSD-3-Clause
"""Call sites from return addresses: the module each falls in (from the
rank's /proc/self/maps as the library saved it) and, through addr2line,
the function and source line when the module has symbols."""

from __future__ import annotations

import shutil
import subprocess
from collections import defaultdict

from mpiscope.common.inputs import is_regular


def _is_executable_elf(path):
    """ET_EXEC (addresses are absolute) rather than ET_DYN (relative to the load base)."""
    if not is_regular(path):  # a FIFO would block the open
        return False
    try:
        with open(path, "rb") as f:
            head = f.read(18)
        return len(head) == 18 and head[:4] == b"\x7fELF" and int.from_bytes(head[16:18], "little") == 2
    except OSError:
        return False


def locate(address: int, modules):
    """(module path, address to give addr2line) for `address`; (None, None) if in no mapping."""
    for lo, hi, offset, _perms, path in modules:
        if lo <= address < hi:
            base = min((m[0] - m[2] for m in modules if m[4] == path), default=lo)
            return path, address if _is_executable_elf(path) else address - base
    return None, None


def symbolize(sites, modules) -> dict:
    """{address: (module, "function at file:line" or "module+0xoffset")} for
    the addresses in `sites`; `modules` as [lo, hi, offset, perms, path] ints."""
    by_module, names = defaultdict(list), {}
    for address in set(sites):
        path, rel = locate(address, modules)
        if path is None:
            names[address] = ("?", hex(address))
            continue
        by_module[path].append((address, rel))
    tool = shutil.which("addr2line")
    for path, items in by_module.items():
        short = path.rsplit("/", 1)[-1]
        found = {}
        if tool:
            # The return address is the instruction after the call: look one byte back.
            try:
                out = subprocess.run(
                    [tool, "-f", "-C", "-e", path, *(hex(max(r - 1, 0)) for _, r in items)],
                    capture_output=True,
                    text=True,
                    timeout=60,
                ).stdout.splitlines()
            except (OSError, subprocess.TimeoutExpired):
                out = []
            for (address, rel), (func, line) in zip(items, zip(out[0::2], out[1::2])):
                if func != "??":
                    where = "" if line.startswith("??") else f" at {line.rsplit('/', 1)[-1]}"
                    found[address] = f"{func}{where}"
        for address, rel in items:
            names[address] = (short, found.get(address, f"{short}+{hex(rel)}"))
    return names
