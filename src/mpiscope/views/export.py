# SPDX-License-Identifier: BSD-3-Clause
"""What every export format is (`Exporter`) and what it gives back
(`Exported`); the formats are views/exporters/, one module each."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, NamedTuple

from mpiscope.common.errors import UsageError


class Exported(NamedTuple):
    text: str  # a stream format's output; a directory format's report of what it wrote
    notes: list  # what was left out and why (the CLI prints them on stderr)


@dataclass(frozen=True)
class Exporter:
    name: str  # --format NAME
    help: str  # what it writes, for `mpiscope export --help` (lines of 65 columns)
    writes_directory: bool  # True: files into the new directory -o DIR; False: text to stdout or -o FILE
    # export(run_dir, bench, directory) -> Exported; bench is --bench (or None), directory
    # the -o DIR of a directory format (None for a stream format, or when -o is missing).
    export: Callable[..., Exported]  # importing its module stays cheap: heavy imports inside


def without_bench(fmt: str, bench: str | None, what: str) -> None:
    """Refuses --bench for format `fmt`, which exports `what`."""
    if bench is not None:
        raise UsageError(f"--bench selects the benchmark of --format osu; --format {fmt} exports {what}")
