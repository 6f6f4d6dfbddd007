# SPDX-License-Identifier: BSD-3-Clause
"""A stored run's kind, read from its context.json: "profile", "app",
"imported", or None for a measurement."""

from __future__ import annotations

import os

from mpiscope.common.errors import UsageError
from mpiscope.common.inputs import InputError, read_json


def run_kind(run_dir) -> str | None:
    """The kind of the run at `run_dir`; a damaged context.json is a UsageError."""
    cj = os.path.join(run_dir, "context.json")  # not pathlib: `mpiscope show` starts without it
    try:
        doc = read_json(cj, missing_ok=True)
        return doc.get("kind") if doc is not None else None
    except (InputError, AttributeError) as e:  # cut short, overwritten
        raise UsageError(
            f"{cj} is damaged: it is not valid JSON ({e}); restore it from a copy, or `mpiscope runs rm` the run"
        ) from None


def measured_run(run_dir) -> None:
    """Refuses a run that holds no measured samples (imported, app, profile)."""
    kind = run_kind(run_dir)
    if kind == "imported":
        from mpiscope.store.ingest import imported_run

        imported_run(run_dir)
    if kind == "app":
        raise UsageError(
            f"{run_dir} is an app run: its launches are launches.parquet in it; "
            "`mpiscope show RUN --json` prints its answer"
        )
    if kind == "profile":
        raise UsageError(
            f"{run_dir} is a profile: its tables are the Parquet files in it "
            "(profile_cells, profile_peers, profile_sites, profile_trace, library_view); "
            "`mpiscope show RUN --json` prints its summary"
        )
