# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope timechart RUN --bench B --algo A --size S [--rep R] [-o FILE.svg]`."""

from __future__ import annotations

from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.common.sizes import parse_size_option
from mpiscope.store import catalog
from mpiscope.cli import types
from mpiscope.cli.options import add_out, add_run
from mpiscope.cli.commands import command_parser


def cmd_timechart(args) -> int:
    run_dir = catalog.resolve(args.out, args.run)
    size = parse_size_option("--size", args.size)
    if args.rep is not None and args.rep < 0:
        raise UsageError(f"--rep must be at least 0, got {args.rep}")
    from mpiscope.report.timechart import write_chart
    from mpiscope.views.timechart import load_chart

    chart = load_chart(run_dir, args.bench, args.algo, size, args.rep, args.launch)
    target = Path(args.output or f"timechart-{args.bench}-{args.algo}-{size}-rep{chart.rep}.svg")
    if target.is_dir() or not target.parent.resolve().is_dir():
        raise UsageError(f"cannot write the chart to {target}: give a file name in an existing directory")
    write_chart(chart, target)
    print(f"{chart.title}: {chart.sent} sends, {chart.received} receives; time chart written to {target.resolve()}")
    return 0


def add_timechart_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "timechart",
        cmd_timechart,
        description="""\
One row per rank: a bar from when each send and receive was posted to when
it completed, and an arrow from every send to the completion of its receive,
on the global clock. Needs a run measured with --trace (our own algorithms).\
""",
        epilog="""\
examples:
  mpiscope run -n 4 --bench allgather --algo ring,bruck --sizes 1K,64K --trace
  mpiscope timechart latest --bench allgather --algo ring --size 1K -o ring.svg\
""",
    )
    add_run(p)
    p.add_argument("--bench", required=True, type=types.text, help="the collective benchmark")
    p.add_argument("--algo", required=True, type=types.text, help="the algorithm")
    p.add_argument("--size", required=True, type=types.size, help="the size (bytes; units B/K/M/G)")
    p.add_argument("--rep", type=types.count(0), help="repetition (default: the one with the median time)")
    p.add_argument("--launch", type=types.count(0), default=0, help="launch (default 0)")
    p.add_argument("-o", "--output", type=types.output_file, help="SVG file (default timechart-B-A-S-repR.svg here)")
    add_out(p)
