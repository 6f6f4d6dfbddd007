# SPDX-License-Identifier: BSD-3-Clause
"""A run's summary as plain text and JSON (show, run, export json), from rows
already computed (views/show.py computes them; views/show_cache.py keeps
them). No numpy, pyarrow or statistics: `mpiscope show` of a run whose rows
are cached imports none of them."""

from __future__ import annotations

import math

from mpiscope.common.documents import json_document
from mpiscope.store.labels import bench_label
from mpiscope.views.text import table

TYPE_CHECKING = False  # store.run (dataclasses) is not imported to print kept rows
if TYPE_CHECKING:
    from mpiscope.store.run import Run

STAT_KEYS = ("min", "median", "ci_low", "ci_high", "p90", "p99", "max")


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


def show_json(rows, run: Run, summary: dict) -> str:
    """`show`'s rows (each with its quality verdict), the quality summary
    (views.show.quality_summary) and the run context as JSON (show --json,
    export json, run --json)."""
    return show_document(run.run_id, run.path, run.context, rows, summary)


def show_document(run_id: str, run_dir, context: dict, rows, summary: dict) -> str:
    """show_json from the run's id, directory and context."""
    return json_document(
        "show",
        {
            "run_id": run_id,
            "run_dir": None if run_dir is None else str(run_dir),
            "context": context,
            "quality": summary,
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


def run_notes(run: Run, status: bool = True) -> list[str]:
    """Warnings about a run itself, each saying what to do (the CLI prints
    them to stderr, then the quality warnings): its failure (only with
    `status`), its timer, its incomplete ranks."""
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
    return out
