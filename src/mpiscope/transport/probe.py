# SPDX-License-Identifier: BSD-3-Clause
"""What the machine offers the transport lab, as the engine finds it
(`mpiscope-engine --probe-transport`, no launcher): whether Cross Memory
Attach works between two processes of this user and, if not, exactly why
(Yama ptrace scope, CAP_SYS_PTRACE, seccomp, container hints); and the
placement classes of its CPUs (sysfs), one pair of CPUs for each."""

from __future__ import annotations

import json
import subprocess

from mpiscope.common.errors import UsageError
from mpiscope.engine.build import ensure_engine


def probe(mpi) -> dict:
    engine = ensure_engine(mpi)
    done = subprocess.run([str(engine), "--probe-transport"], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        raise UsageError(f"{engine} --probe-transport failed (exit {done.returncode}): {done.stderr.strip()}")
    try:
        return json.loads(done.stdout)
    except json.JSONDecodeError:
        raise UsageError(f"{engine} --probe-transport printed no JSON: {done.stdout[:200]!r}") from None


def format_probe(p: dict) -> str:
    cma, pl = p["cma"], p["placement"]
    lines = [f"cma (process_vm_readv): {'available' if cma['available'] else 'UNAVAILABLE'}"]
    if not cma["available"]:
        lines.append(f"  why: {cma['errno']}: {cma['reason']}")
    lines.append(f"  facts: {cma['facts']}")
    lines.append(f"placement classes ({pl['cpus']} CPUs, CPU 0 against the others):")
    for c in pl["classes"]:
        lines.append(
            f"  {c['class']:<8} e.g. CPUs {c['pair'][0]} and {c['pair'][1]} "
            f"({c['pairs_with_cpu0']} CPU{'s' if c['pairs_with_cpu0'] != 1 else ''} so placed from CPU 0)"
        )
    if not pl["classes"]:
        lines.append("  none: one CPU only")
    thp = p.get("thp") or {"mode": "absent", "available": False}
    lines.append(
        f"transparent huge pages: {thp['mode']} "
        + (
            "(run --huge-pages gets them by madvise)"
            if thp["available"]
            else "(run --huge-pages asks in vain: buffers stay in 4 KiB pages)"
        )
    )
    return "\n".join(lines) + "\n"
