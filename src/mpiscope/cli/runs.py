# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope runs` (list the runs under the output root) and `mpiscope runs
rm RUN...` (delete runs)."""

from __future__ import annotations

import argparse
import sys

from mpiscope.cli.commands import command_parser
from mpiscope.cli import types
from mpiscope.cli.options import RUN_REF, add_out
from mpiscope.store.layout import unfinished_runs
from mpiscope.store.listing import kept_runs
from mpiscope.views.runs import format_runs


def cmd_runs(args) -> int:
    runs = kept_runs(args.out)  # no run changed since the last listing: the catalog need not be imported
    if runs is None:
        from mpiscope.store import catalog

        runs = catalog.list_runs(args.out)
    sys.stdout.write(format_runs(runs))
    for path in unfinished_runs(args.out):
        sys.stderr.write(
            f"mpiscope: note: {path} is a run mpiscope stopped before storing it; "
            f"`mpiscope runs ingest {path}` stores what it measured, "
            f"`mpiscope runs rm {path}` deletes it\n"
        )
    return 0


def cmd_ingest(args) -> int:
    from mpiscope.measure.runner import reingest
    from mpiscope.store.remove import resolve_all

    for run_dir in resolve_all(args.out, args.runs):
        stored, context = reingest(run_dir)
        print(f"ingested {stored.name} from its raw files (status: {context['status']})")
    return 0


def cmd_rm(args) -> int:
    from mpiscope.store.remove import remove_runs

    for run_id in remove_runs(args.out, args.runs):
        print(f"removed {run_id}")
    return 0


def add_runs_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "runs",
        cmd_runs,
        description="""\
List the runs under the output root, oldest first: id, creation
time, status, MPI library, number of ranks, benchmarks, label.
`mpiscope runs rm RUN...` deletes runs; `mpiscope runs ingest RUN...`
stores runs again from their raw files.\
""",
        epilog="""\
examples:
  mpiscope runs --out mpiscope-runs
  mpiscope runs rm 20240301-0900 baseline
  mpiscope runs ingest latest\
""",
    )
    add_out(p)
    sub = p.add_subparsers(dest="runs_command", metavar="SUBCOMMAND", parser_class=subparsers._parser_class)
    rm = sub.add_parser(
        "rm",
        help="delete runs and their catalog entries",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""\
Delete runs: their directories and their catalog entries. Every RUN is
looked up first; if one names no run under the output root, nothing is
deleted.\
""",
    )
    rm.add_argument("runs", metavar="RUN", nargs="+", type=types.run_ref, help=f"the runs to delete: {RUN_REF}")
    add_out(rm, of_parent="`mpiscope runs`")
    rm.set_defaults(func=cmd_rm)
    ingest = sub.add_parser(
        "ingest",
        help="store runs again from their raw files",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""\
Store runs again from the raw files the engine wrote (kept in RUN/raw/): a run
whose store failed (the disk was full), whose samples.parquet is damaged, or
that mpiscope left unfinished (a hidden .RUN.partial directory, named by its
path; it gets its final name).\
""",
    )
    ingest.add_argument("runs", metavar="RUN", nargs="+", type=types.run_ref, help=f"the runs to ingest: {RUN_REF}")
    add_out(ingest, of_parent="`mpiscope runs`")
    ingest.set_defaults(func=cmd_ingest)
