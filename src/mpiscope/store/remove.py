# SPDX-License-Identifier: BSD-3-Clause
"""Deleting runs (`mpiscope runs rm`): every reference is resolved and
checked before anything is deleted, so a typo deletes nothing.

A run directory is first renamed to a hidden name (invisible to listings,
like a run still being written), then removed, then dropped from the
catalog: an interrupted removal never leaves a half-deleted run that looks
whole.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.store import catalog


def resolve_all(out_root, refs) -> list[Path]:
    """The run directories `refs` name, each once, all directly under
    `out_root`; UsageError for the first that names no run there."""
    root = Path(out_root).resolve()
    dirs = []
    for ref in refs:
        run_dir = catalog.resolve(out_root, ref).resolve()
        if run_dir.parent != root:
            raise UsageError(
                f"{ref}: {run_dir} is not a run under the output root {root}; "
                "point --out at the directory that holds it"
            )
        if run_dir not in dirs:
            dirs.append(run_dir)
    return dirs


def remove_runs(out_root, refs) -> list[str]:
    """Deletes the runs `refs` name (run ids, prefixes, labels, paths,
    'latest'); returns their directory names (the run ids). Nothing is deleted unless every
    reference names a run."""
    dirs = resolve_all(out_root, refs)
    for run_dir in dirs:
        hidden = run_dir.with_name(f".{run_dir.name}.removing")
        os.rename(run_dir, hidden)
        shutil.rmtree(hidden)
    catalog.forget(out_root, dirs)
    return [d.name for d in dirs]
