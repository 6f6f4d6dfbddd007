# SPDX-License-Identifier: BSD-3-Clause
"""Summaries of a run as data (show_rows) and as plain text (format_show, notes).

Rows keep values in base units (seconds, bytes/s); only the formatters
convert to microseconds and MB/s.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from mpiscope.common.documents import json_document
from mpiscope.stats import quality
from mpiscope.stats.summary import summarize
from mpiscope.store.ingest import SAMPLES_FILE, load
from mpiscope.store.run import Run
from mpiscope.store.samples import timer_interval
from mpiscope.store.series import all_series_samples, bench_label
from mpiscope.views.text import table

STAT_KEYS = ("min", "median", "ci_low", "ci_high", "p90", "p99", "max")
# What a row's "quality" holds beside the row's own n, invalid and stop.
QUALITY_KEYS = ("invalid_share", "ci_reached", "ci_halfwidth", "start", "flags", "details")


def show_rows(run_dir) -> list[dict]:
    """One summary per bench × algo × size, in run order, all launches pooled,
    each with its quality verdict (stored with the run, or computed now)."""
    run_dir = Path(run_dir)
    if not (run_dir / SAMPLES_FILE).exists():
        return []
    table, run = load(run_dir)
    series = all_series_samples(table, run)
    return rows_of(table, run, series, quality.verdicts_of(run_dir, series, run))


def rows_of(table, run: Run, series, verdicts) -> list[dict]:
    """show_rows from what is already at hand: the samples table, its series
    (series.all_series_samples) and their verdicts (`run` has them in memory
    from storing the run, so it need not read the run back)."""
    rows = []
    # The same samples with the timer interval taken off each timed span.
    interval = timer_interval(run)
    removed = all_series_samples(table, run, remove_timer=True) if interval else None
    for i, ((bench, algo, size, s), v) in enumerate(zip(series, verdicts)):
        st = summarize(s.values)
        records = run.entries(bench, size, algo)
        row = {"bench": bench, "algo": algo, "size": size, "unit": s.unit, "n": st["n"], "invalid": s.n_invalid}
        row.update({k: st[k] for k in STAT_KEYS})
        row["ci_level"] = st["ci_level"]
        row["median_timer_removed"] = float(np.median(removed[i][3].values)) if removed and len(removed[i][3]) else None
        row["timer_interval_s"] = interval or None
        row["stop"] = v.stop
        row["launches"] = len({x.launch for x in records})
        d = v.to_dict()
        row["quality"] = {k: d[k] for k in QUALITY_KEYS}
        rows.append(row)
    return rows


def verdicts(rows) -> list[quality.Verdict]:
    """The verdicts of show_rows' rows."""
    return [quality.Verdict.from_dict({**r, **r["quality"]}) for r in rows if "quality" in r]


def _first_line(text):
    """'Open MPI v4.1.4, package: ...' -> 'Open MPI v4.1.4'; whitespace squeezed."""
    if not text:
        return ""
    line = str(text).strip().splitlines()[0]
    return " ".join(line.split(",")[0].split())


def describe(run: Run) -> str:
    """One line naming the run."""
    parts = [f"run {run.run_id}", str(run.status or "?")]
    mpi = run.mpi or ""
    lib = _first_line(run.mpi_library)
    parts.append(f"{mpi} ({lib})" if mpi and lib else (mpi or lib or "mpi ?"))
    if run.np is not None:
        parts.append(f"np={run.np}")
    if run.launches is not None:
        parts.append(f"launches={run.launches}")
    if isinstance(run.timer, dict) and run.timer.get("name"):
        parts.append(f"timer={run.timer['name']}")
    if run.created:
        parts.append(str(run.created))
    if run.git_sha:
        parts.append(f"git {str(run.git_sha)[:10]}")
    return "  ".join(parts)


def _scaled(value, u):
    """Display value: microseconds for times, MB/s (1e6 B/s) for bandwidths."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value * 1e6:.2f}" if u == "s" else f"{value / 1e6:.2f}"


def quality_summary(rows, run: Run) -> dict:
    """The run's quality in brief: the headline, the grouped warnings and the
    thresholds they use (JSON of show, run and export)."""
    vs = verdicts(rows)
    return {"headline": quality.headline(vs), "warnings": quality.warnings(vs, run), "thresholds": quality.thresholds()}


def show_json(rows, run: Run) -> str:
    """`show`'s rows (each with its quality verdict), the quality summary and
    the run context as JSON (show --json, export json, run --json)."""
    return json_document(
        "show",
        {
            "run_id": run.run_id,
            "run_dir": None if run.path is None else str(run.path),
            "context": run.context,
            "quality": quality_summary(rows, run),
            "rows": rows,
        },
    )


def format_show(rows, run: Run) -> str:
    """Fixed-width table of show_rows, headed by a one-line run description."""
    head = describe(run)
    if not rows:
        reason = run.error or "no samples were stored"
        return f"{head}\n(no measurements: {reason})\n"
    level = rows[0].get("ci_level", 0.95)
    ci = f"ci{round(level * 100):d}"
    removed = any(r.get("median_timer_removed") is not None for r in rows)
    header = [
        "bench",
        "size(B)",
        "unit",
        "n",
        "invalid",
        "min",
        "median",
        *(["median*"] if removed else []),
        f"{ci}_low",
        f"{ci}_high",
        "p90",
        "p99",
        "max",
        "stop",
        "flags",
    ]
    right = [
        False,
        True,
        False,
        True,
        True,
        True,
        True,
        *([True] if removed else []),
        True,
        True,
        True,
        True,
        True,
        False,
        False,
    ]
    lines = []
    for r in rows:
        u = r["unit"]
        stats = [_scaled(r[k], u) for k in STAT_KEYS]
        if removed:
            stats.insert(2, _scaled(r.get("median_timer_removed"), u))
        flags = ",".join((r.get("quality") or {}).get("flags") or ())
        lines.append(
            [
                bench_label(r["bench"], r.get("algo")),
                str(r["size"]),
                "us" if u == "s" else "MB/s",
                str(r["n"]),
                str(r["invalid"]),
            ]
            + stats
            + [r.get("stop") or "-", flags or "-"]
        )
    foot = (
        (
            f"median*: the median with the timer interval ({rows[0]['timer_interval_s'] * 1e9:.0f} ns, what two "
            "back-to-back timer reads measure) taken off every timed span\n"
        )
        if removed
        else ""
    )
    return f"{head}\n{table(header, lines, right)}\n{foot}"


def notes(rows, run: Run, status: bool = True) -> list[str]:
    """Warnings about a run, each saying what to do (the CLI prints them to
    stderr): the run's own (its failure only with `status`), then one line
    per kind of quality flag."""
    out = []
    if status and run.status == "failed":
        out.append(
            f"the run failed: {run.error or 'no error recorded'}; the table holds what was measured before the failure"
        )
    fallback = run.timer.get("fallback") if isinstance(run.timer, dict) else None
    if fallback:
        out.append(
            f"the timer is clock_gettime, not the CPU's counter ({fallback}): reads cost more; "
            "--timer clock chooses it without this warning"
        )
    for launch, rank in run.incomplete_ranks:
        out.append(
            f"launch {launch} rank {rank}: raw file incomplete (the rank stopped "
            "early); series it did not finish are missing or partial"
        )
    return out + quality.warnings(verdicts(rows), run)
