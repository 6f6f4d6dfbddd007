# SPDX-License-Identifier: BSD-3-Clause
"""Time charts drawn: SVG of a Chart (views/timechart.py) in the report's
style, written to a file or embedded in the report."""

from __future__ import annotations

from pathlib import Path

from mpiscope.common.atomic import write_text
from mpiscope.report import plots  # matplotlib set-up and SVG export of the report
from mpiscope.store.trace import complete_reps, has_trace, load_trace, messages, traced_series
from mpiscope.views.timechart import Chart, lanes, load_chart


def draw(chart: Chart) -> str:
    """The chart as SVG text (matplotlib, in the report's style)."""
    plt = plots.plt
    us = 1e6
    ev = chart.events
    row = {r: i for i, r in enumerate(chart.ranks)}
    fig, ax = plt.subplots(figsize=(8, 0.55 * len(chart.ranks) + 1.6))
    send_c, recv_c, span_c = plots.COLORS[0], plots.COLORS[1], "#bbbbbb"
    for r, (a, b) in chart.spans.items():
        if r in row and a is not None and b is not None:
            ax.broken_barh(
                [((a - chart.origin) * us, (b - a) * us)],
                (row[r] - 0.45, 0.9),
                facecolors=span_c,
                alpha=0.35,
                linewidth=0,
            )
    place = lanes(ev)
    for (rank, seq), (op, post, done, y, h) in place.items():
        ax.broken_barh(
            [((post - chart.origin) * us, max((done - post) * us, 1e-3))],
            (row[rank] + y, h),
            facecolors=send_c if op == "send" else recv_c,
            edgecolors="black",
            linewidth=0.3,
        )
    for m in messages(ev):
        if m.src not in row or m.dst not in row:
            continue
        x0, x1 = (m.send_post - chart.origin) * us, (m.recv_done - chart.origin) * us
        ys, hs = place[(m.src, m.send_seq)][3:]
        yr, hr = place[(m.dst, m.recv_seq)][3:]
        y0, y1 = row[m.src] + ys + hs / 2, row[m.dst] + yr + hr / 2
        ax.annotate(
            "",
            xy=(x1, y1),
            xytext=(x0, y0),
            arrowprops={
                "arrowstyle": "->",
                "color": "black",
                "linewidth": 0.6,
                "alpha": 0.7,
                "shrinkA": 0,
                "shrinkB": 0,
            },
        )
    ax.set_yticks(range(len(chart.ranks)), [f"rank {r}" for r in chart.ranks])
    ax.set_ylim(len(chart.ranks) - 0.5, -0.5)
    ax.set_xlabel(
        "time since the agreed start of the repetition (µs)" if chart.spans else "time since the first message (µs)"
    )
    ax.set_title(chart.title, fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)
    ax.grid(False, axis="y")
    from matplotlib.patches import Patch
    from matplotlib.lines import Line2D

    handles = [
        Patch(facecolor=send_c, edgecolor="black", label="send (posted → completed)"),
        Patch(facecolor=recv_c, edgecolor="black", label="receive (posted → completed)"),
        Line2D([0], [0], color="black", linewidth=0.8, label="message: send → receive done"),
    ]
    if chart.spans:
        handles.append(Patch(facecolor=span_c, alpha=0.35, label="whole operation on the rank"))
    ax.legend(
        handles=handles,
        loc="upper center",
        bbox_to_anchor=(0.5, -0.18 - 0.3 / len(chart.ranks)),
        ncol=2,
        fontsize=8,
        frameon=False,
    )
    return plots._svg(fig)


def write_chart(chart: Chart, path) -> Path:
    """Writes the SVG file (with its XML declaration) atomically."""
    path = Path(path)
    write_text(path, '<?xml version="1.0" encoding="utf-8" standalone="no"?>\n' + draw(chart))
    return path


def report_chart(run_dir, bench, algo, samples_table=None) -> dict | None:
    """The report's time chart of one bench × algorithm of a run: the largest
    traced size, at the repetition with the median time; None when the run
    did not trace it."""
    if not has_trace(run_dir):
        return None
    table, blocks = load_trace(run_dir)
    sizes = [s for b, a, s in traced_series(table) if (b, a) == (bench, algo) and complete_reps(blocks, b, a, s) > 0]
    if not sizes:
        return None
    chart = load_chart(run_dir, bench, algo, max(sizes), samples_table=samples_table)
    return {
        "svg": draw(chart),
        "size": chart.size,
        "rep": chart.rep,
        "caption": f"{chart.title}; {chart.sent} sends and {chart.received} receives. "
        "Bars run from when a send or receive was posted to when it completed; "
        "arrows go from each send to the completion of the receive it matched.",
    }
