# SPDX-License-Identifier: BSD-3-Clause
"""The export formats (`mpiscope export --format NAME`), one module each
holding `EXPORTER`, an `Exporter` (views/export.py).

A new format is one new module and its line in MODULES below."""

from __future__ import annotations

from importlib import import_module

from mpiscope.common.errors import UsageError
from mpiscope.views.export import Exported, Exporter

# --format NAME → the module of its exporter, imported only when it is chosen.
MODULES = {
    "csv": "samples_csv",
    "json": "summary_json",
    "osu": "osu_text",
    "otf2": "otf2_archive",
}
NAMES = tuple(MODULES)


def get(name: str) -> Exporter:
    """The exporter of format `name`."""
    if name not in MODULES:
        raise UsageError(f"unknown export format '{name}': choose one of {', '.join(NAMES)}")
    return import_module(f"{__name__}.{MODULES[name]}").EXPORTER


def export(run_dir, fmt: str, bench: str | None = None) -> Exported:
    """The run at `run_dir` in the stream format `fmt`."""
    return get(fmt).export(run_dir, bench, None)
