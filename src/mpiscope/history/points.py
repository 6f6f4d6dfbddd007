# SPDX-License-Identifier: BSD-3-Clause
"""Every stored run's medians: one Point per run and series (benchmark ×
variant × size), with the median's 95% interval as the run stored it in
quality.json. Runs are listed through each output root's catalog; a run
stored before quality.json held medians has them computed from its samples."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from mpiscope.stats import quality
from mpiscope.store import catalog


KINDS = ("measurement", "imported")   # runs with medians: measured, or imported (mpiscope import)


@dataclass(frozen=True)
class Point:
    """One run's median of one series."""

    run_id: str
    created: str          # ISO 8601, as the run stored it
    label: str | None
    path: str
    context: dict         # the run's context.json (with `hosts` from its samples when absent)
    bench: str
    algo: str
    size: int
    unit: str             # "s", or "B/s" for bandwidths
    median: float
    ci_low: float
    ci_high: float
    n: int

    @property
    def when(self) -> datetime:
        return timestamp(self.created)


def timestamp(text) -> datetime:
    """A run's creation time without its zone (runs store local time)."""
    try:
        return datetime.fromisoformat(str(text)).replace(tzinfo=None)
    except ValueError:
        return datetime.min


def load_points(roots) -> list[Point]:
    """The points of every completed measurement run under `roots`, oldest first."""
    points, seen = [], set()
    for root in roots:
        for entry in catalog.list_runs(root, with_context=True):
            context = entry["context"]
            if entry["run_id"] in seen or entry["status"] != "completed" or \
                    (context.get("kind") or "measurement") not in KINDS:
                continue
            seen.add(entry["run_id"])
            points += _run_points(entry, context)
    return sorted(points, key=lambda p: (p.when, p.run_id))


def _run_points(entry, context) -> list[Point]:
    verdicts = quality.load_stored(entry["path"])
    if verdicts is None or not all(math.isfinite(v.median) or v.n == 0 for v in verdicts):
        verdicts, context = _from_samples(entry["path"], context)
    elif context.get("hosts") is None:
        context = {**context, "hosts": _stored_hosts(entry["path"])}
    return [Point(entry["run_id"], entry["created"] or "", entry.get("label"), entry["path"], context,
                  v.bench, v.algo, v.size, v.unit, v.median, v.ci_low, v.ci_high, v.n)
            for v in verdicts if v.n > 0 and not v.skipped and math.isfinite(v.median)]


def _from_samples(path, context):
    """Verdicts with medians and the hosts, from the run's samples.parquet."""
    from mpiscope.common.errors import UsageError
    from mpiscope.store.ingest import load
    from mpiscope.store.series import all_series_samples

    try:
        table, run = load(path)
    except UsageError:  # no samples, or damaged: the run has no numbers to show
        return [], context
    verdicts = quality.run_verdicts(all_series_samples(table, run), run)
    return verdicts, {**context, "hosts": run.hosts}


def _stored_hosts(path):
    """{host: ranks} from the samples file's metadata (runs stored without it in context.json)."""
    from mpiscope.common.errors import UsageError
    from mpiscope.store.ingest import load_context

    try:
        return load_context(path).get("hosts")
    except UsageError:
        return None
