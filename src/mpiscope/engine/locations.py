# SPDX-License-Identifier: BSD-3-Clause
"""Where the C sources are and where their builds go.

In a checkout (a clone, or `pip install -e`) the sources are the checkout's
own native/ (native/engine/, native/cluster/, ...), and builds go to its
build/. An installed package carries the same folders inside itself
(mpiscope/_csrc/, copied there from native/ by setup.py) and builds into the
user's cache directory, since site-packages may be read-only and is shared
by every user.
"""

import os
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
REPO = PACKAGE.parents[1]  # the checkout, when the package is run from one
NATIVE = REPO / "native"  # the checkout's C programs, one folder each
CHECKOUT = REPO if (NATIVE / "engine" / "Makefile").is_file() and (REPO / "src" / "mpiscope").is_dir() else None


def source_dir(name: str) -> Path:
    """The sources of the C program `name` ("engine", "cluster", "pmpi", "sim")."""
    return (NATIVE / name) if CHECKOUT else (PACKAGE / "_csrc" / name)


def build_root() -> Path:
    """build/ of the checkout, else $XDG_CACHE_HOME/mpiscope (~/.cache/mpiscope)."""
    if CHECKOUT:
        return CHECKOUT / "build"
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "mpiscope"
