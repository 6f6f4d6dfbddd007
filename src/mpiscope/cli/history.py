# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope history [OUT...]`: the runs of one or more output roots as
series of comparable numbers, their change points and what changed at each;
with `--check`, the gate of a nightly job."""

from __future__ import annotations

import sys

from mpiscope.cli import types
from mpiscope.cli.commands import command_parser
from mpiscope.cli.options import add_json, add_out, out_root
from mpiscope.cli.percent import parse_percent
from mpiscope.common.errors import UsageError
from mpiscope.history import DEFAULT_THRESHOLD

where_item = types.checked(lambda text: _where(text), "text")
threshold_item = types.checked(lambda text: parse_percent(text, "--threshold"), "percent")


def _where(text):
    from mpiscope.history.series import parse_where

    return parse_where(text)


def cmd_history(args) -> int:
    from mpiscope.history import gate
    from mpiscope.history.points import load_points
    from mpiscope.history.series import group, parse_where, select
    from mpiscope.history.trend import trend
    from mpiscope.views.history import history_json, history_text

    threshold = parse_percent(args.threshold, "--threshold")
    wheres = [parse_where(w) for w in args.where or ()]
    baseline = gate.parse_baseline(args.baseline) if args.baseline is not None else None
    if baseline is not None and not args.check:
        raise UsageError("--baseline chooses what --check compares the newest runs with; give --check too")
    roots = args.roots or [args.out]
    points = load_points(roots)
    if not points:
        raise UsageError(
            f"no completed measurement runs under {', '.join(map(str, roots))}: give "
            "the output roots that hold your runs (OUT..., or --out DIR); `mpiscope runs "
            "--out DIR` lists the runs of one"
        )
    chosen = select(points, wheres)
    if not chosen:
        raise UsageError(
            f"no runs match {' '.join('--where ' + w for w in args.where)} among the "
            f"{len({p.run_id for p in points})} runs under {', '.join(map(str, roots))}"
        )
    series = group(chosen, split_version=args.split_version)
    judgements = gate.check(series, threshold, baseline) if args.check else None
    trends = [trend(s, threshold) for s in series]
    if args.report:
        _write_report(args.report, trends, roots, threshold, judgements)
    sys.stdout.write(
        history_json(trends, roots, threshold, judgements, args.baseline)
        if args.json
        else history_text(trends, judgements, threshold, args.rows)
    )
    if judgements is not None and any(j.status == gate.REGRESSION for j in judgements):
        return gate.REGRESSION_EXIT
    return 0


def _write_report(target, trends, roots, threshold, judgements) -> None:
    """The history page: one HTML file, no network needed to open it."""
    from pathlib import Path

    from mpiscope.common.atomic import write_text
    from mpiscope.report import history_data, render

    target = Path(target)
    write_text(
        target,
        render.render("history.html.j2", history_data.gather(trends, roots, threshold, judgements), target.parent),
    )
    sys.stderr.write(f"history page written to {target.resolve()}\n")


def add_history_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "history",
        cmd_history,
        description="""\
The runs of one or more output roots as series: runs whose numbers compare
(same machine, node count and ranks per node, MPI library, benchmark, size,
timer, cache, launcher and --sync), oldest first. Per series: a sparkline,
each run's median with its 95% CI, and the change points: steps that are
significant with the runs' intervals and whose interval lies wholly beyond
--threshold, each with the first run after it, the step with its interval,
its direction, and what differed between the runs on either side (MPI
version, libraries, kernel, CPU, governor, nodes, MPI environment
variables, mpiscope and engine versions, Slurm partition).

--check judges the newest run of every series against its baseline (the
runs since the series' last change point; while the newest run is in a
segment that began slower, or follows slower nights, the runs before the
first slower night, so a regression fails the check every night until the
level comes back; or --baseline)
and exits with 5 when one is a significant regression beyond the
threshold.\
""",
        epilog="""\
examples:
  mpiscope history
  mpiscope history ~/mpiscope/nightly --where bench=allreduce --where size=64K
  mpiscope history --where since=2026-03-01 --where np=16 --threshold 5%
  mpiscope history --check --json > history.json      # exit 5: a regression
  mpiscope history --check --baseline 2026-03-01
  mpiscope history --where bench=allreduce --report history.html\
""",
    )
    p.add_argument(
        "roots", metavar="OUT", nargs="*", type=out_root, help="output roots whose runs are read (default: --out's)"
    )
    add_out(p)
    p.add_argument(
        "--where",
        metavar="KEY=VALUE",
        action="append",
        type=where_item,
        help="keep runs with KEY in VALUE,...: bench, size, np, label, mpi, machine, "
        "since DATE, until DATE (repeat: all must hold)",
    )
    p.add_argument(
        "--threshold",
        default=f"{DEFAULT_THRESHOLD * 100:g}%",
        type=threshold_item,
        help="the smallest step reported, as compare's --noise (default: %(default)s)",
    )
    p.add_argument(
        "--split-version",
        action="store_true",
        help="a new series at every MPI library version (default: a version change "
        "is a context change inside one series)",
    )
    p.add_argument(
        "--rows",
        metavar="N",
        type=types.count(0),
        default=12,
        help="runs in each series' table: the newest N and the two around every "
        "change point (default: %(default)s; 0: every run)",
    )
    p.add_argument(
        "--report",
        metavar="FILE",
        type=types.output_file,
        help="also write the history page: per series a trend chart with every run's "
        "interval and the change points, and what changed at each (HTML)",
    )
    p.add_argument("--check", action="store_true", help="exit with 5 when the newest run of a series is a regression")
    p.add_argument(
        "--baseline",
        metavar="RUN|DATE",
        type=types.text,
        help="with --check: compare with this run (id, prefix, label) or with the runs from DATE (YYYY-MM-DD) on",
    )
    add_json(p, "print the history JSON document")
