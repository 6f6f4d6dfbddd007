"""Time charts of traced collective algorithms (seed 003's "diagramming
tool"): one row per rank, a bar from when each send or receive was posted to
when it completed, and an arrow for every message from its send to the
completion of the receive that matched it, all on the global clock.

`mpiscope timechart RUN --bench B --algo A --size S [--rep R] [-o FILE.svg]`
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from . import catalog
from .atomic import write_text
from .errors import UsageError
from .sizes import parse_size
from .trace import complete_reps, load_trace, messages, select, traced_series

DEFAULT_OUT = "mpiscope-runs"


@dataclass
class Chart:
    """One repetition of one traced series, ready to draw."""

    bench: str
    algo: str
    size: int
    launch: int
    rep: int
    ranks: list            # rank numbers, in row order
    events: object         # pyarrow table of the repetition's events
    origin: float          # global time of x = 0 (the agreed start, or the first post)
    spans: dict            # rank -> (global start, global end) of the operation, when known
    sent: int = 0
    received: int = 0

    @property
    def title(self) -> str:
        return (f"{self.bench}/{self.algo}, {self.size} B, {len(self.ranks)} ranks: "
                f"repetition {self.rep} (launch {self.launch})")


def _series_rows(run_dir, bench, algo, size, launch, table=None):
    """(rep -> {rank: (t_start, t_end, t_sched)}, sample values by rep) from
    samples.parquet (or `table`, the run's samples when already loaded)."""
    import pyarrow.compute as pc

    from .samples import sample_values
    from .store import load

    if table is None:
        try:
            table, _ = load(run_dir)
        except UsageError:
            return {}, {}
    mask = pc.and_(pc.and_(pc.equal(table["bench"], bench), pc.equal(table["algo"], algo)),
                   pc.and_(pc.equal(table["size"], size), pc.equal(table["launch"], launch)))
    sub = table.filter(mask)
    rows = {}
    for rep, rank, a, b, c in zip(*(sub[k].to_pylist() for k in
                                    ("rep", "rank", "t_start", "t_end", "t_sched"))):
        rows.setdefault(rep, {})[rank] = (a, b, c)
    try:
        smp = sample_values(table, bench, size, launch=launch, algo=algo)
        values = {int(r): float(v) for r, v in zip(smp.rep, smp.values)}
    except UsageError:
        values = {}
    return rows, values


def median_rep(values: dict, limit: int) -> int:
    """The repetition (below `limit`) whose time is the median of those traced."""
    reps = sorted((v, r) for r, v in values.items() if r < limit and np.isfinite(v))
    return reps[(len(reps) - 1) // 2][1] if reps else 0


def load_chart(run_dir, bench, algo, size, rep=None, launch=0, samples_table=None) -> Chart:
    """The chart of one repetition (default: the one with the median time)."""
    run_dir = Path(run_dir)
    table, blocks = load_trace(run_dir)
    present = traced_series(table)
    if (bench, algo, size) not in present:
        listed = ", ".join(f"{b}/{a} {s}" for b, a, s in present) or "none"
        raise UsageError(f"run {run_dir.name} has no trace of {bench}/{algo} at {size} B; "
                         f"traced: {listed}")
    limit = complete_reps(blocks, bench, algo, size, launch)
    if limit == 0:
        raise UsageError(f"no repetition of {bench}/{algo} at {size} B (launch {launch}) was "
                         "traced completely on every rank")
    rows, values = _series_rows(run_dir, bench, algo, size, launch, samples_table)
    if rep is None:
        rep = median_rep(values, limit)
    elif not 0 <= rep < limit:
        raise UsageError(f"--rep {rep}: repetitions 0..{limit - 1} were traced completely")
    events = select(table, bench, algo, size, launch, rep)
    ranks = sorted(set(events["rank"].to_pylist()) | set(rows.get(rep, {})))
    per_rank = rows.get(rep, {})
    scheds = [v[2] for v in per_rank.values() if v[2] is not None and np.isfinite(v[2])]
    posts = [t for t in events["t_post"].to_pylist() if t is not None and np.isfinite(t)]
    starts = [v[0] for v in per_rank.values() if v[0] is not None and np.isfinite(v[0])]
    origin = min(scheds) if scheds else min(starts + posts) if (starts or posts) else 0.0
    ops = events["op"].to_pylist()
    return Chart(bench, algo, size, launch, rep, ranks, events, origin,
                 {r: (v[0], v[1]) for r, v in per_rank.items()},
                 sent=ops.count("send"), received=ops.count("recv"))


def _lanes(events):
    """Where each event's bar goes: {(rank, seq): (op, post, done, y offset, height)}.

    Sends take the upper half of the rank's row, receives the lower half;
    operations of one kind that are in flight at the same time on a rank get
    lanes of their own (the first lane free when the operation is posted),
    so that no bar hides another."""
    cols = {k: events[k].to_pylist() for k in ("rank", "seq", "op", "t_post", "t_done")}
    groups = {}
    for i in range(events.num_rows):
        if cols["t_post"][i] is None or cols["t_done"][i] is None:
            continue
        groups.setdefault((cols["rank"][i], cols["op"][i]), []).append(i)
    out = {}
    for (rank, op), idx in groups.items():
        idx.sort(key=lambda i: (cols["t_post"][i], cols["seq"][i]))
        ends, lane = [], {}
        for i in idx:
            free = next((k for k, end in enumerate(ends) if end <= cols["t_post"][i]), None)
            if free is None:
                free = len(ends)
                ends.append(0.0)
            ends[free] = cols["t_done"][i]
            lane[i] = free
        h = 0.36 / len(ends)
        top = -0.4 if op == "send" else 0.04
        for i in idx:
            out[(rank, cols["seq"][i])] = (op, cols["t_post"][i], cols["t_done"][i],
                                          top + lane[i] * h, h * 0.9)
    return out


def draw(chart: Chart) -> str:
    """The chart as SVG text (matplotlib, in the report's style)."""
    from .report import plots  # matplotlib set-up and SVG export of the report
    plt = plots.plt
    us = 1e6
    ev = chart.events
    row = {r: i for i, r in enumerate(chart.ranks)}
    fig, ax = plt.subplots(figsize=(8, 0.55 * len(chart.ranks) + 1.6))
    send_c, recv_c, span_c = plots.COLORS[0], plots.COLORS[1], "#bbbbbb"
    for r, (a, b) in chart.spans.items():
        if r in row and a is not None and b is not None:
            ax.broken_barh([((a - chart.origin) * us, (b - a) * us)], (row[r] - 0.45, 0.9),
                           facecolors=span_c, alpha=0.35, linewidth=0)
    place = _lanes(ev)
    for (rank, seq), (op, post, done, y, h) in place.items():
        ax.broken_barh([((post - chart.origin) * us, max((done - post) * us, 1e-3))],
                       (row[rank] + y, h), facecolors=send_c if op == "send" else recv_c,
                       edgecolors="black", linewidth=0.3)
    for m in messages(ev):
        if m.src not in row or m.dst not in row:
            continue
        x0, x1 = (m.send_post - chart.origin) * us, (m.recv_done - chart.origin) * us
        ys, hs = place[(m.src, m.send_seq)][3:]
        yr, hr = place[(m.dst, m.recv_seq)][3:]
        y0, y1 = row[m.src] + ys + hs / 2, row[m.dst] + yr + hr / 2
        ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                    arrowprops={"arrowstyle": "->", "color": "black", "linewidth": 0.6,
                                "alpha": 0.7, "shrinkA": 0, "shrinkB": 0})
    ax.set_yticks(range(len(chart.ranks)), [f"rank {r}" for r in chart.ranks])
    ax.set_ylim(len(chart.ranks) - 0.5, -0.5)
    ax.set_xlabel("time since the agreed start of the repetition (µs)" if chart.spans
                  else "time since the first message (µs)")
    ax.set_title(chart.title, fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)
    ax.grid(False, axis="y")
    from matplotlib.patches import Patch
    from matplotlib.lines import Line2D
    handles = [Patch(facecolor=send_c, edgecolor="black", label="send (posted → completed)"),
               Patch(facecolor=recv_c, edgecolor="black", label="receive (posted → completed)"),
               Line2D([0], [0], color="black", linewidth=0.8, label="message: send → receive done")]
    if chart.spans:
        handles.append(Patch(facecolor=span_c, alpha=0.35, label="whole operation on the rank"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.18 - 0.3 / len(chart.ranks)),
              ncol=2, fontsize=8, frameon=False)
    return plots._svg(fig)


def write_chart(chart: Chart, path) -> Path:
    """Writes the SVG file (with its XML declaration) atomically."""
    path = Path(path)
    write_text(path, '<?xml version="1.0" encoding="utf-8" standalone="no"?>\n' + draw(chart))
    return path


def cmd_timechart(args) -> int:
    run_dir = catalog.resolve(args.out, args.run)
    try:
        size = parse_size(str(args.size))
    except UsageError:
        raise UsageError(f"--size '{args.size}' is not a size: write e.g. 1000, 64K") from None
    if args.rep is not None and args.rep < 0:
        raise UsageError(f"--rep must be at least 0, got {args.rep}")
    chart = load_chart(run_dir, args.bench, args.algo, size, args.rep, args.launch)
    target = Path(args.output or f"timechart-{args.bench}-{args.algo}-{size}-rep{chart.rep}.svg")
    if target.is_dir() or not target.parent.resolve().is_dir():
        raise UsageError(f"cannot write the chart to {target}: give a file name in an existing "
                         "directory")
    write_chart(chart, target)
    print(f"{chart.title}: {chart.sent} sends, {chart.received} receives; "
          f"time chart written to {target.resolve()}")
    return 0


def add_timechart_command(subparsers) -> None:
    """Register `timechart` on an argparse subparsers object."""
    p = subparsers.add_parser(
        "timechart", help="draw the sends and receives of a traced algorithm (SVG)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="One row per rank: a bar from when each send and receive was posted to when\n"
                    "it completed, and an arrow from every send to the completion of its receive,\n"
                    "on the global clock. Needs a run measured with --trace (our own algorithms).",
        epilog="examples:\n"
               "  mpiscope run -n 4 --bench allgather --algo ring,bruck --sizes 1K,64K --trace\n"
               "  mpiscope timechart latest --bench allgather --algo ring --size 1K -o ring.svg")
    p.add_argument("run", metavar="RUN", nargs="?", default="latest",
                   help="a run id, a unique prefix of one, a path, or 'latest' (default)")
    p.add_argument("--bench", required=True, help="the collective benchmark")
    p.add_argument("--algo", required=True, help="the algorithm")
    p.add_argument("--size", required=True, help="the size (bytes; units B/K/M/G)")
    p.add_argument("--rep", type=int, help="repetition (default: the one with the median time)")
    p.add_argument("--launch", type=int, default=0, help="launch (default 0)")
    p.add_argument("-o", "--output", help="SVG file (default timechart-B-A-S-repR.svg here)")
    p.add_argument("--out", metavar="DIR", default=DEFAULT_OUT,
                   help="output root holding the run directories (default: %(default)s)")
    p.set_defaults(func=cmd_timechart)



def report_chart(run_dir, bench, algo, samples_table=None) -> dict | None:
    """The report's time chart of one bench × algorithm of a run: the largest
    traced size, at the repetition with the median time; None when the run
    did not trace it."""
    from .trace import has_trace

    if not has_trace(run_dir):
        return None
    table, blocks = load_trace(run_dir)
    sizes = [s for b, a, s in traced_series(table) if (b, a) == (bench, algo)
             and complete_reps(blocks, b, a, s) > 0]
    if not sizes:
        return None
    chart = load_chart(run_dir, bench, algo, max(sizes), samples_table=samples_table)
    return {"svg": draw(chart), "size": chart.size, "rep": chart.rep,
            "caption": f"{chart.title}; {chart.sent} sends and {chart.received} receives. "
                       "Bars run from when a send or receive was posted to when it completed; "
                       "arrows go from each send to the completion of the receive it matched."}
