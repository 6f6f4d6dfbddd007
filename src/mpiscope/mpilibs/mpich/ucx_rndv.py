# SPDX-License-Identifier: BSD-3-Clause
"""Where UCX switches MPICH ch4:ucx's tag sends from eager to rendezvous.
UCX_RNDV_THRESH set in the launch wins; its default "auto" is worked out
by UCX when an endpoint is made, from the lanes it picks and their
bandwidth and latency, so it is asked of UCX itself: `ucx_info -e` prints
the endpoint's `tag_send` line (rendezvous from N bytes) for a peer on the
same host or another, with the launch's UCX_ settings. Without ucx_info
(Debian's ucx-utils) the threshold is not known."""

from __future__ import annotations

import math
import os
import re
import subprocess

MPICH_UCP_FEATURES = "trm"  # MPICH ch4:ucx's ucp_init: tag matching, RMA, active messages
_TAG_SEND = re.compile(r"^#\s*tag_send:.*?\.\.(\d+)\.\.<rndv>", re.MULTILINE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
_MEMUNITS = re.compile(r"^(\d+)\s*([kmg]?)b?$", re.IGNORECASE)


def memunits(text: str) -> float | None:
    """A UCX memory-units value in bytes ("32k", "8192", "1mb"; "inf": never), None for "auto" or other text."""
    text = text.strip()
    if text.lower() == "inf":
        return math.inf
    m = _MEMUNITS.match(text)
    return float(int(m.group(1)) * _UNITS[m.group(2).lower()]) if m else None


def rndv_from(report: str) -> float | None:
    """The size from which `ucx_info -e`'s tag_send goes by rendezvous; inf where it never does, None if absent."""
    m = _TAG_SEND.search(report)
    if m:
        return float(m.group(1))
    return math.inf if re.search(r"^#\s*tag_send:", report, re.MULTILINE) else None


def launch_ucx_env(context: dict) -> dict:
    """The UCX_ settings of the traced launch: its environment, then -genv/-env NAME VALUE in the command."""
    env = {k: str(v) for k, v in (context.get("env") or {}).items() if k.startswith("UCX_")}
    for argv in context.get("launch_commands") or [context.get("launch_command") or []]:
        words = [str(w) for w in argv or []]
        for i, w in enumerate(words[:-2]):
            if w in ("-genv", "-env") and words[i + 1].startswith("UCX_"):
                env[words[i + 1]] = words[i + 2]
    return env


def ucx_info_report(placement: str, ucx_env: dict, run=subprocess.run) -> str | None:
    """`ucx_info -e` for MPICH's features and a peer at `placement` (intra: same host, inter: another), or None."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("UCX_")} | ucx_env
    argv = ["ucx_info", "-e", "-u", MPICH_UCP_FEATURES, "-P", placement]
    try:
        done = run(argv, env=env, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None
