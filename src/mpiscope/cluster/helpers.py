# SPDX-License-Identifier: BSD-3-Clause
"""The cluster's C helpers (native/cluster/*.c, native/cluster/Makefile): built on first
use, rebuilt when their source changed."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.engine.locations import build_root, source_dir
from mpiscope.cluster.netns import ClusterError

SOURCE = source_dir("cluster")
BUILD = build_root() / "cluster"
DELAYD = BUILD / "mpiscope-delayd"
YIELD_LIBRARY = BUILD / "libmpiscope-yield.so"


def ensure(target: Path) -> Path:
    """Builds `target` (one of this module's paths) if it is missing or stale."""
    if shutil.which("cc") is None:
        raise UsageError("the C compiler is missing; run 'make setup' (build-essential)")
    p = subprocess.run(["make", "-s", "-C", str(SOURCE), f"BUILD={BUILD}", str(target)], capture_output=True, text=True)
    if p.returncode != 0:
        raise ClusterError(f"building {target.name} failed:\n{p.stderr[-3000:]}")
    return target
