# SPDX-License-Identifier: BSD-3-Clause
"""Every source file says its licence in its first lines, and the package says it too."""

import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TAG = "SPDX-License-Identifier: BSD-3-Clause"
SOURCE_SUFFIXES = {".py", ".c", ".h", ".sh", ".f90", ".j2", ".css"}
# Inputs and expected outputs of tests are data, kept byte for byte.
DATA_DIRS = ("tests/data/", "tests/snapshots/")


def is_source(path: str) -> bool:
    name = Path(path).name
    if path.startswith(DATA_DIRS):
        return False
    return Path(path).suffix in SOURCE_SUFFIXES or name == "Makefile" or path == ".ci/run"


def tracked_files() -> list[str]:
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True)
    return out.stdout.split()


def test_every_source_file_has_an_spdx_line_at_the_top():
    sources = [p for p in tracked_files() if is_source(p)]
    assert len(sources) > 500  # the walk saw the tree, not an empty list
    missing = [p for p in sources
               if not any(TAG in line for line in (ROOT / p).read_text().splitlines()[:2])]
    assert missing == [], f"add a '{TAG}' comment as the first line (after a #!) of: {missing}"


def test_the_licence_file_and_the_package_metadata_agree():
    assert (ROOT / "LICENSE").read_text().startswith("BSD 3-Clause License")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
