# SPDX-License-Identifier: BSD-3-Clause
"""The C program (native/sim/): build it, run it, read its JSON."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.engine.locations import build_root, source_dir
from mpiscope.engine.make import make

SOURCE = source_dir("sim")
BINARY = build_root() / "sim" / "mpiscope-sim"


def ensure_built() -> Path:
    """The simulator, (re)built when its sources or native/engine/colls changed;
    MPISCOPE_TEST_SIM: another program in its place (another CPU's build
    under qemu-user, docs/reference/test-hooks.md)."""
    if os.environ.get("MPISCOPE_TEST_SIM"):
        return Path(os.environ["MPISCOPE_TEST_SIM"])
    if shutil.which("cc") is None:
        raise UsageError("the C compiler is missing; run 'make setup' (build-essential)")
    p = make(SOURCE, BINARY.parent)
    if p.returncode != 0:
        raise RuntimeError(f"building the simulator failed:\n{p.stderr[-3000:]}")
    return BINARY


class TooLarge(Exception):
    """The schedule has more operations than --max-ops allows."""


def _run(argv, **kw) -> subprocess.CompletedProcess:
    p = subprocess.run([str(ensure_built()), *map(str, argv)], capture_output=True, text=True, **kw)
    if p.returncode == 4:
        raise TooLarge(p.stderr.strip())
    if p.returncode == 2:
        raise UsageError(p.stderr.strip().removeprefix("mpiscope-sim: "))
    if p.returncode != 0:
        raise RuntimeError(f"mpiscope-sim failed ({p.returncode}): {p.stderr.strip()[-2000:]}")
    return p


def schedule(argv) -> None:
    """mpiscope-sim schedule ARGV (writes where -o says)."""
    _run(["schedule", *argv])


def simulate(argv) -> dict:
    """mpiscope-sim run ARGV: its JSON result."""
    return json.loads(_run(["run", *argv]).stdout)


def probe(argv) -> dict:
    """mpiscope-sim probe ARGV: operations per rank and rank symmetry."""
    return json.loads(_run(["probe", *argv]).stdout)
