"""`mpiscope runs` (list the runs under the output root) and `mpiscope runs
rm RUN...` (delete runs)."""

from __future__ import annotations

import argparse
import sys

from mpiscope.cli.commands import command_parser
from mpiscope.cli.options import RUN_REF, add_out
from mpiscope.store.layout import context_files
from mpiscope.views.runs import format_runs


def cmd_runs(args) -> int:
    if not context_files(args.out):  # no run: the catalog need not even be imported
        sys.stdout.write(format_runs([]))
        return 0
    from mpiscope.store import catalog

    sys.stdout.write(format_runs(catalog.list_runs(args.out)))
    return 0


def cmd_rm(args) -> int:
    from mpiscope.store.remove import remove_runs

    for run_id in remove_runs(args.out, args.runs):
        print(f"removed {run_id}")
    return 0


def add_runs_command(subparsers) -> None:
    p = command_parser(subparsers, "runs", cmd_runs,
        description="""\
List the runs under the output root, oldest first: id, creation
time, status, MPI library, number of ranks, benchmarks, label.
`mpiscope runs rm RUN...` deletes runs.\
""",
        epilog="""\
examples:
  mpiscope runs --out mpiscope-runs
  mpiscope runs rm 20240301-0900 baseline\
""")
    add_out(p)
    sub = p.add_subparsers(dest="runs_command", metavar="SUBCOMMAND",
                           parser_class=subparsers._parser_class)
    rm = sub.add_parser("rm", help="delete runs and their catalog entries",
                        formatter_class=argparse.RawDescriptionHelpFormatter,
                        description="""\
Delete runs: their directories and their catalog entries. Every RUN is
looked up first; if one names no run under the output root, nothing is
deleted.\
""")
    rm.add_argument("runs", metavar="RUN", nargs="+", help=f"the runs to delete: {RUN_REF}")
    add_out(rm, of_parent="`mpiscope runs`")
    rm.set_defaults(func=cmd_rm)
