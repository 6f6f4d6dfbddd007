# SPDX-License-Identifier: BSD-3-Clause
"""Snapshot comparison for text outputs.

A test fails on any difference from tests/snapshots/<name>. To accept a
deliberate change, rerun with MPISCOPE_UPDATE_SNAPSHOTS=1 and review the diff.
"""

import difflib
import os
from pathlib import Path

SNAPSHOTS = Path(__file__).parent / "snapshots"


def assert_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("MPISCOPE_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        return
    assert path.exists(), (f"snapshot {path} is missing: create it with "
                           "MPISCOPE_UPDATE_SNAPSHOTS=1 and review it")
    expected = path.read_text()
    if text != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                            f"snapshots/{name}", "actual"))
        raise AssertionError(f"output differs from snapshot {name}:\n{diff}")
