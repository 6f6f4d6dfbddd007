# SPDX-License-Identifier: BSD-3-Clause
"""mpiscope's version: the installed distribution's, whose one source is
pyproject.toml (`mpiscope.__version__`, the engine builds' names)."""

import functools


@functools.cache  # the package metadata is read once per process
def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("mpiscope")
    except PackageNotFoundError:  # a source tree on PYTHONPATH, never installed
        return "source"
