# SPDX-License-Identifier: BSD-3-Clause
"""Where runs live under an output root: OUT/<run_id>/ holding its
context.json, and OUT/catalog.duckdb indexing them. Hidden directories
are runs still being written (.<run_id>.partial) or being deleted
(.<run_id>.removing). Standard library only:
`mpiscope runs` asks this before anything heavier is imported."""

import os

SCHEMA_VERSION = 1  # of the run context and Parquet datasets; independent of the package version
DEFAULT_OUT = "mpiscope-runs"  # the output root unless --out, MPISCOPE_OUT or a config file says
CONTEXT_FILE = "context.json"
CATALOG_FILE = "catalog.duckdb"
QUALITY_FILE = "quality.json"  # per-series verdicts (stats/quality.py)


def check_out_root(out_root, what="--out"):
    """Refuses an output root that cannot hold run directories: an existing
    file, or a path below one. Creates nothing."""
    # Standard library and common/ only: `mpiscope runs` imports this module first.
    from mpiscope.common.errors import UsageError

    path = os.path.abspath(out_root)
    if os.path.exists(path) and not os.path.isdir(path):
        raise UsageError(
            f"{what} {out_root} is a file, not a directory; give a directory to "
            "hold the runs (it is created when missing)"
        )
    parent = os.path.dirname(path)
    while not os.path.exists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        raise UsageError(f"{what} {out_root}: {parent} is a file, not a directory; give a directory to hold the runs")
    return out_root  # (not writable: the runner's mkdir says so, on the machine that runs)


def rebuild_hint(run_dir) -> str:
    """What to do about a damaged file ingest wrote: store the run again from
    its raw files, where it has them."""
    if os.path.isdir(os.path.join(run_dir, "raw")):
        return f"its raw files are kept: `mpiscope runs ingest {run_dir}` stores the run again from them"
    return "the run has no raw files to rebuild it from: restore it from a copy, or measure again"


def context_files(out_root) -> list[str]:
    """OUT/<dir>/context.json of every visible run directory, by directory name."""
    try:
        entries = os.scandir(out_root)
    except (FileNotFoundError, NotADirectoryError):
        return []
    with entries:
        names = sorted(e.name for e in entries if e.is_dir() and not e.name.startswith("."))
    paths = (os.path.join(out_root, name, CONTEXT_FILE) for name in names)
    return [p for p in paths if os.path.isfile(p)]


def unfinished_runs(out_root) -> list[str]:
    """Hidden .<run_id>.partial directories whose mpiscope process is gone (killed,
    or stopped by a full disk) on this machine: runs that were never stored."""
    try:
        entries = [
            e.path
            for e in os.scandir(out_root)
            if e.is_dir() and e.name.startswith(".") and e.name.endswith(".partial")
        ]
    except (FileNotFoundError, NotADirectoryError):
        return []
    if not entries:
        return []
    import socket  # only where there are some: every `mpiscope runs` asks

    from mpiscope.common.inputs import InputError, read_json

    left = []
    for path in sorted(entries):
        try:
            writer = read_json(os.path.join(path, CONTEXT_FILE)).get("writer") or {}
        except (InputError, AttributeError):
            writer = {}
        if writer.get("host") == socket.gethostname() and _alive(writer.get("pid")):
            continue  # still being written
        left.append(path)
    return left


def _alive(pid):
    if not isinstance(pid, int):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
