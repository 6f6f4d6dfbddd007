# SPDX-License-Identifier: BSD-3-Clause
"""What a RUN argument names: a run id, a label, a unique prefix of a run
id, a path to a run directory, or "latest". Runs are looked up in the
listing kept beside the catalog (store/listing.py), the catalog itself only
when that listing is not current, so that `mpiscope show` starts without
DuckDB or pathlib."""

from __future__ import annotations

import os

from mpiscope.common.errors import UsageError
from mpiscope.store.layout import CONTEXT_FILE


def _listed(out_root) -> list[dict]:
    """catalog.list_runs(out_root), from the kept listing when it is current."""
    from mpiscope.store.listing import kept_runs

    runs = kept_runs(out_root)
    if runs is None:
        from mpiscope.store.catalog import list_runs

        runs = list_runs(out_root)
    return runs


def _as_path(ref):
    from pathlib import Path  # only for a RUN given as a path: its name as Path writes it

    return Path(ref)


def _holds_parquet(path) -> bool:
    """Whether the directory holds a *.parquet entry (one it cannot list holds none)."""
    try:
        with os.scandir(path) as entries:
            return any(e.name.endswith(".parquet") for e in entries)
    except OSError:
        return False


def is_run_dir(path) -> bool:
    """Whether `path` (str or Path) is a directory holding context.json or samples.parquet."""
    return os.path.isdir(path) and (
        os.path.exists(os.path.join(path, CONTEXT_FILE)) or os.path.exists(os.path.join(path, "samples.parquet"))
    )


def resolve_dir(out_root, ref: str) -> str:
    """The directory of the run `ref`: a run id, the label of one run
    (`mpiscope run --label`), a unique prefix of a run id, a path to a run
    directory (as pathlib.Path writes it), or "latest" (the newest run)."""
    ref = str(ref)
    if not ref.strip():  # it would be a prefix of every run id
        raise UsageError(
            "an empty RUN names no run; give a run id, a unique prefix of one, a "
            "label, a path to a run directory, or 'latest'"
        )
    if ref != "latest" and os.path.isdir(ref) and not os.path.exists(os.path.join(ref, CONTEXT_FILE)):
        if _holds_parquet(ref):
            as_path = _as_path(ref)
            raise UsageError(
                f"{as_path / CONTEXT_FILE} is missing: {as_path} holds a run's tables but not "
                "its context; restore the file from a copy, or `mpiscope runs rm` the run"
            )
    if ref != "latest" and is_run_dir(ref):
        return str(_as_path(ref))
    runs = _listed(out_root)
    hint = f"`mpiscope runs --out {out_root}` lists the runs"
    if not runs:
        raise UsageError(
            f"no runs under {out_root}: run `mpiscope run` first, or point --out at the directory that holds your runs"
        )
    if ref == "latest":
        return runs[-1]["path"]
    exact = [r for r in runs if r["run_id"] == ref]
    if exact:
        return exact[0]["path"]
    labelled = [r for r in runs if r.get("label") == ref]
    if len(labelled) > 1:
        raise UsageError(
            f"label '{ref}' names {len(labelled)} runs ({', '.join(r['run_id'] for r in labelled)}); give a run id"
        )
    if labelled:
        return labelled[0]["path"]
    matches = [r for r in runs if r["run_id"].startswith(ref)]
    if len(matches) == 1:
        return matches[0]["path"]
    if matches:
        ids = ", ".join(r["run_id"] for r in matches[:10])
        more = f" and {len(matches) - 10} more" if len(matches) > 10 else ""
        raise UsageError(f"run '{ref}' is ambiguous: it matches {ids}{more}; give more characters of the run id")
    raise UsageError(
        f"no run '{ref}' under {out_root} (no run id, prefix of one, or label); "
        f"{hint}, or give a path to a run directory or 'latest'"
    )
