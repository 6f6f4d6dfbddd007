# SPDX-License-Identifier: BSD-3-Clause
"""What the machine was when a run started, for its context (`machine`):
the things that move a benchmark's numbers from one night to the next
without anyone touching mpiscope's options. `mpiscope history` names the
ones that differ between two runs. Every field is best effort: one that
cannot be read is left out, and a reader takes an absent field as unknown."""

from __future__ import annotations

import hashlib
import os
import platform
import re
import subprocess
from pathlib import Path

CPUINFO = "/proc/cpuinfo"
GOVERNOR = "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"
LDD_TIMEOUT_S = 10.0
_LDD_LINE = re.compile(r"^\s*(\S+)\s+=>\s+(\S+)")


def describe(engine) -> dict:
    """The machine's description: kernel, CPU model and frequency governor,
    mpiscope's version, the engine binary's digest and the libraries it loads."""
    found: dict = {
        "host": platform.node(),
        "kernel": f"{platform.release()} {platform.version()}",
        "cpu_model": cpu_model(),
        "governor": _first_line(GOVERNOR),
        "mpiscope_version": mpiscope_version(),
    }
    if engine is not None and Path(engine).is_file():
        found["engine_sha256"] = _digest(engine)
        found["libraries"] = linked_libraries(engine)
    return {k: v for k, v in found.items() if v not in (None, "", {})}


def mpiscope_version() -> str | None:
    from mpiscope.common.version import version

    found = version()
    return None if found == "source" else found  # "source": a checkout never installed


def cpu_model() -> str | None:
    try:
        with open(CPUINFO, errors="replace") as f:
            for line in f:
                if line.startswith(("model name", "Model", "cpu model")):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return platform.processor() or None


def linked_libraries(engine) -> dict:
    """{soname: the file it resolves to}: the file's name carries the
    library's version where the library is installed as its packagers do."""
    try:
        out = subprocess.run(["ldd", str(engine)], capture_output=True, text=True, timeout=LDD_TIMEOUT_S).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    libs = {}
    for line in out.splitlines():
        m = _LDD_LINE.match(line)
        if m and m.group(2).startswith("/"):
            libs[m.group(1)] = os.path.realpath(m.group(2))
    return libs


def _digest(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def _first_line(path) -> str | None:
    try:
        with open(path, errors="replace") as f:
            return f.readline().strip() or None
    except OSError:
        return None
