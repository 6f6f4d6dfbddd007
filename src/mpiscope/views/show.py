# SPDX-License-Identifier: BSD-3-Clause
"""Summaries of a run as data (show_rows) with their quality verdicts; as
plain text and JSON by views/show_text.py (format_show, show_json, notes).

Rows keep values in base units (seconds, bytes/s); only the formatters
convert to microseconds and MB/s.
"""

from __future__ import annotations

from pathlib import Path

from mpiscope.stats import quality
from mpiscope.stats.summary import median_unsorted, summarize
from mpiscope.store.ingest import SAMPLES_FILE, load
from mpiscope.store.run import Run
from mpiscope.store.samples import TIMER_SHARE, timer_interval
from mpiscope.store.series import all_series_samples
from mpiscope.views import show_text
from mpiscope.views.show_text import STAT_KEYS, describe, format_show  # noqa: F401 - read from here by callers

# What a row's "quality" holds beside the row's own n, invalid and stop.
QUALITY_KEYS = ("invalid_share", "ci_reached", "ci_halfwidth", "start", "flags", "details")


def show_rows(run_dir) -> list[dict]:
    """One summary per bench × algo × size, in run order, all launches pooled,
    each with its quality verdict (stored with the run, or computed now)."""
    run_dir = Path(run_dir)
    if not (run_dir / SAMPLES_FILE).exists():
        return []
    table, run = load(run_dir, for_samples=True)
    series = all_series_samples(table, run)
    return rows_of(table, run, series, quality.verdicts_of(run_dir, series, run))


def rows_of(table, run: Run, series, verdicts) -> list[dict]:
    """show_rows from what is already at hand: the samples table, its series
    (series.all_series_samples) and their verdicts (`run` has them in memory
    from storing the run, so it need not read the run back). A verdict made
    now carries its series' summary, which is used as it is."""
    rows = []
    interval = timer_interval(run)
    removed = _timer_removed_medians(table, run, series, interval) if interval else {}
    launches = {}  # each series' launches, found in one pass over the run's records
    for record in run.series:
        launches.setdefault((record.bench, record.algo, record.size), set()).add(record.launch)
    for (bench, algo, size, s), v in zip(series, verdicts):
        st = v.summary if v.summary is not None and v.summary["n"] == len(s) else summarize(s.values)
        row = {"bench": bench, "algo": algo, "size": size, "unit": s.unit, "n": st["n"], "invalid": s.n_invalid}
        row.update({k: st[k] for k in STAT_KEYS})
        row["ci_level"] = st["ci_level"]
        row["median_timer_removed"] = removed.get((bench, algo, size))
        row["timer_interval_s"] = interval or None
        row["stop"] = v.stop
        row["launches"] = len(launches.get((bench, algo, int(size)), ()))
        d = v.to_dict()
        row["quality"] = {k: d[k] for k in QUALITY_KEYS}
        rows.append(row)
    return rows


def _timer_removed_medians(table, run: Run, series, interval) -> dict:
    """{(bench, algo, size): median of its samples with the timer interval taken
    off each timed span} (a series without samples is left out). Where a rule's
    values are spans themselves, or half spans, that is each value less its
    share of the interval (TIMER_SHARE), exactly as deriving them again gives;
    the other series are derived again."""
    out, again = {}, set()
    for bench, algo, size, s in series:
        if s.rule in TIMER_SHARE:
            if len(s):
                out[(bench, algo, size)] = median_unsorted(s.values - TIMER_SHARE[s.rule] * interval)
        else:
            again.add((bench, algo, size))
    if again:
        for bench, algo, size, s in all_series_samples(table, run, again, remove_timer=True):
            if len(s):
                out[(bench, algo, size)] = median_unsorted(s.values)
    return out


def verdicts(rows) -> list[quality.Verdict]:
    """The verdicts of show_rows' rows."""
    return [quality.Verdict.from_dict({**r, **r["quality"]}) for r in rows if "quality" in r]


def quality_summary(rows, run: Run) -> dict:
    """The run's quality in brief: the headline, the grouped warnings and the
    thresholds they use (JSON of show, run and export)."""
    vs = verdicts(rows)
    return {"headline": quality.headline(vs), "warnings": quality.warnings(vs, run), "thresholds": quality.thresholds()}


def show_json(rows, run: Run, summary=None) -> str:
    """show_text.show_json, the quality summary computed when not given."""
    return show_text.show_json(rows, run, quality_summary(rows, run) if summary is None else summary)


def notes(rows, run: Run, status: bool = True) -> list[str]:
    """Warnings about a run, each saying what to do (the CLI prints them to
    stderr): the run's own (its failure only with `status`), then one line
    per kind of quality flag."""
    return show_text.run_notes(run, status) + quality.warnings(verdicts(rows), run)
