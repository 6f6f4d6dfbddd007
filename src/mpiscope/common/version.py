# SPDX-License-Identifier: BSD-3-Clause
"""mpiscope's version: the installed distribution's, whose one source is
pyproject.toml (`mpiscope.__version__`, the engine builds' names)."""

import functools
import os
import sys

DIST = "mpiscope"


@functools.cache  # the package metadata is read once per process
def version() -> str:
    found = _dist_info_version()
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed(DIST)
    except PackageNotFoundError:  # a source tree on PYTHONPATH, never installed
        return "source"


def _dist_info_version() -> str | None:
    """The Version of the first sys.path entry's mpiscope-*.dist-info, the
    distribution importlib.metadata finds, read without importing it (every
    `run` pays that import before its launch); None where only
    importlib.metadata can say (an egg-info, two candidates, a zip, none)."""
    for entry in sys.path:
        try:
            names = [n for n in os.listdir(entry or ".") if _names_dist(n.lower())]
        except NotADirectoryError:  # a zip archive: importlib.metadata looks inside
            return None
        except OSError:
            continue
        if not names:
            continue
        if len(names) != 1 or not names[0].lower().endswith(".dist-info"):
            return None
        return _metadata_version(os.path.join(entry or ".", names[0], "METADATA"))
    return None


def _names_dist(name: str) -> bool:
    if not name.endswith((".dist-info", ".egg-info")):
        return False
    return name.rpartition(".")[0].split("-")[0].replace("_", "-").replace(".", "-") == DIST


def _metadata_version(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.strip():  # the headers end at the first blank line
                    break
                if line.startswith("Version:"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None
