# SPDX-License-Identifier: BSD-3-Clause
"""Every source file says its licence in its first lines, and the package says it too."""

import fnmatch
import os
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


def ignored(name: str) -> bool:
    """What .gitignore names (virtual environments, builds, caches) is not the project's source."""
    patterns = [line.strip().rstrip("/") for line in (ROOT / ".gitignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    return name == ".git" or any(fnmatch.fnmatch(name, p) for p in patterns)


def project_files() -> list[str]:
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not ignored(d)]
        found += [os.path.relpath(os.path.join(folder, f), ROOT) for f in files if not ignored(f)]
    return found


def test_every_source_file_has_an_spdx_line_at_the_top():
    sources = [p for p in project_files() if is_source(p)]
    assert len(sources) > 500  # the walk saw the tree, not an empty list
    missing = [p for p in sources
               if not any(TAG in line for line in (ROOT / p).read_text().splitlines()[:2])]
    assert missing == [], f"add a '{TAG}' comment as the first line (after a #!) of: {missing}"


def test_the_licence_file_and_the_package_metadata_agree():
    assert (ROOT / "LICENSE").read_text().startswith("BSD 3-Clause License")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "BSD-3-Clause"
    assert project["license-files"] == ["LICENSE"]
