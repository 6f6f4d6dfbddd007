# SPDX-License-Identifier: BSD-3-Clause
"""Every stored run's medians: one Point per run and series (benchmark ×
variant × size), with the median's 95% interval as the run stored it in
quality.json. Runs are read from each output root's catalog, which keeps
their medians and the context fields history reads (store/history_fields.py); a
run stored before quality.json held medians has them computed from its samples."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from mpiscope.store import catalog


KINDS = ("measurement", "imported")  # runs with medians: measured, or imported (mpiscope import)


@dataclass(slots=True)  # not frozen: a history of 10,000 runs makes 40,000 and more
class Point:
    """One run's median of one series (not to be changed once made)."""

    run_id: str
    created: str  # ISO 8601, as the run stored it
    label: str | None
    path: str
    context: dict  # the fields of context.json history reads (history_fields.history_context),
    # with `hosts` from its samples when absent
    bench: str
    algo: str
    size: int
    unit: str  # "s", or "B/s" for bandwidths
    median: float
    ci_low: float
    ci_high: float
    n: int
    when: datetime  # `created` as a time, without its zone (timestamp())


def timestamp(text) -> datetime:
    """A run's creation time without its zone (runs store local time)."""
    try:
        return datetime.fromisoformat(str(text)).replace(tzinfo=None)
    except ValueError:
        return datetime.min


def load_points(roots) -> list[Point]:
    """The points of every completed measurement run under `roots`, oldest first."""
    runs, seen = [], set()
    for root in roots:
        for entry in catalog.history_runs(root):
            context = entry["context"]
            if entry["run_id"] in seen or (context.get("kind") or "measurement") not in KINDS:
                continue
            seen.add(entry["run_id"])
            when = timestamp(entry["created"] or "")
            runs.append((when, entry["run_id"], _run_points(entry, context, when)))
    runs.sort(key=lambda r: r[:2])
    return [p for _, _, points in runs for p in points]


def _run_points(entry, context, when) -> list[Point]:
    medians = entry["medians"]
    if medians is None:
        medians, context = _from_samples(entry["path"], context)
    elif context.get("hosts") is None:
        context = {**context, "hosts": _stored_hosts(entry["path"])}
    # m: a stored row (bench, algo, size, unit, median, ci_low, ci_high, n)
    return [
        Point(entry["run_id"], entry["created"] or "", entry.get("label"), entry["path"], context, *m, when)  # type: ignore[call-arg]
        for m in medians
    ]


def _from_samples(path, context):
    """Median rows (as history_fields.median_row makes them) and the hosts, from the run's samples.parquet."""
    from mpiscope.common.errors import UsageError
    from mpiscope.stats import quality  # here: runs that stored their medians never need it
    from mpiscope.store.history_fields import median_row
    from mpiscope.store.ingest import load
    from mpiscope.store.series import all_series_samples

    try:
        table, run = load(path)
    except UsageError:  # no samples, or damaged: the run has no numbers to show
        return [], context
    verdicts = quality.run_verdicts(all_series_samples(table, run), run)
    rows = (median_row(v.to_dict()) for v in verdicts)
    return [r for r in rows if r is not None], {**context, "hosts": run.hosts}


def _stored_hosts(path):
    """{host: ranks} from the samples file's metadata (runs stored without it in context.json)."""
    from mpiscope.common.errors import UsageError
    from mpiscope.store.ingest import load_context

    try:
        return load_context(path).get("hosts")
    except UsageError:
        return None
