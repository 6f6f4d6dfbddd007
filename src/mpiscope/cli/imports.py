# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope import osu|imb|reframe FILE...`: a centre's logs of the OSU
Micro-Benchmarks, the Intel MPI Benchmarks and ReFrame stored as runs of
kind `imported`, so that `mpiscope history` shows them as series. Every file
is read and checked before anything is written."""

from __future__ import annotations

import argparse
import hashlib
import sys

from mpiscope.cli import types
from mpiscope.cli.commands import command_parser
from mpiscope.cli.options import add_out
from mpiscope.common.errors import UsageError

LOG_LIMIT = 256 * 1024 * 1024  # a log file: years of a nightly perflog fit far below this
FORMATS = {
    "osu": (
        "an OSU Micro-Benchmarks output",
        "OSU 5.x–7.x program outputs (osu_latency, osu_bw, "
        "osu_allreduce, …; with or without -f), one or several programs a file",
    ),
    "imb": (
        "an Intel MPI Benchmarks output",
        "IMB-MPI1 2019–2021 outputs; every process count of a file is a run of its own",
    ),
    "reframe": (
        "a ReFrame performance log",
        "ReFrame 4 performance logs (the filelog handler: "
        "a header line, then one line per run of the test, each line a run)",
    ),
}


def cmd_import(args) -> int:
    from mpiscope.imports import dates, imported_runs

    when = dates.parse_option(args.date) if args.date is not None else None
    logs = []  # (log, sha256 of its file)
    seen = {}
    for path in args.files:
        text, digest = _read(path, FORMATS[args.format][0])
        if digest in seen:
            raise UsageError(f"{path} is the same file as {seen[digest]}: give each file once")
        seen[digest] = path
        for log in _parser(args.format)(path, text):
            if log.when is None:
                log.when, log.date_from = dates.date_of(path, when)
            logs.append((log, digest))
    done = imported_runs.already_imported(args.out, {(d, log.part) for log, d in logs})
    if done:
        (sha, part), run_id = next(iter(done.items()))
        log = next(log for log, d in logs if (d, log.part) == (sha, part))
        raise UsageError(
            f"{log.path}{' (' + part + ')' if part else ''} is imported already, as "
            f"run {run_id} under {args.out}: nothing was imported (`mpiscope runs rm "
            f"{run_id}` first to import it again)"
        )
    given = imported_runs.Given(args.machine, args.mpi, args.mpi_version, args.np, args.nodes, args.label)
    for log, run_dir, context in imported_runs.store(args.out, logs, given, sys.argv[1:]):
        part = f" ({log.part})" if log.part else ""
        print(
            f"imported {log.path}{part}: run {run_dir.name}, {context['created']}, "
            f"{len(log.values)} values of {', '.join(context['benches'])}"
        )
        for note in log.notes:
            print(f"mpiscope: note: {log.path} {note}", file=sys.stderr)
    return 0


def _parser(name):
    from mpiscope.imports import imb, osu, reframe

    return {"osu": osu.parse, "imb": imb.parse, "reframe": reframe.parse}[name]


def _read(path, what):
    from mpiscope.common.inputs import read_text

    text = read_text(path, LOG_LIMIT, what=what, hint=f"give {what} (a text file)")
    if not text.strip():
        raise UsageError(f"{what} {path} is empty: give the file the tool wrote its results to")
    return text, hashlib.sha256(text.encode("utf-8")).hexdigest()


def add_import_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "import",
        description="""\
Store other tools' logs as runs of kind `imported`: the numbers the tool
printed (its own summary per benchmark and size, no repetitions), dated by
the log (IMB's Date, ReFrame's job completion time) or by --date. `mpiscope
history` shows them as series beside mpiscope's own runs (in series of
their own); `mpiscope show RUN` prints one. A file that is not the tool's
output, or a damaged line, is refused with its line number, and nothing is
imported.\
""",
        epilog="""\
examples:
  mpiscope import osu nightly/osu_allreduce-2024-03-*.txt --date name --np 64 --machine alpine
  mpiscope import imb imb-2024-03-07.out --machine alpine --mpi intel-mpi --mpi-version 2021.11
  mpiscope import reframe perflogs/alpine/batch/osu_run*.log
  mpiscope history --where machine=alpine\
""",
    )
    sub = p.add_subparsers(dest="format", metavar="FORMAT", required=True, parser_class=subparsers._parser_class)
    for name, (what, help_text) in FORMATS.items():
        s = sub.add_parser(
            name,
            help=help_text,
            formatter_class=argparse.RawDescriptionHelpFormatter,
            description=f"Import {help_text}.",
        )
        s.add_argument("files", metavar="FILE", nargs="+", type=types.path, help=f"{what}")
        s.add_argument(
            "--date",
            metavar="DATE|mtime|name",
            type=types.text,
            help="the date of logs that print none: YYYY-MM-DD[THH:MM], 'mtime' (each "
            "file's modification time) or 'name' (a date in each file's name)",
        )
        s.add_argument(
            "--machine",
            metavar="NAME",
            type=types.text,
            help="the machine or cluster the log was measured on (default: the log's "
            "system:partition for ReFrame, else unknown)",
        )
        s.add_argument(
            "--mpi", metavar="NAME", type=types.text, help="the MPI library (e.g. open-mpi, mpich, intel-mpi)"
        )
        s.add_argument("--mpi-version", metavar="VERSION", type=types.text, help="the MPI library's version")
        s.add_argument(
            "--np", type=types.count(1, types.MAX_RANKS), help="ranks, where the log does not say (OSU's collectives)"
        )
        s.add_argument("--nodes", type=types.count(1, types.MAX_RANKS), help="nodes, where the log does not say")
        s.add_argument("--label", type=types.label, help="a label for the imported runs")
        add_out(s)
        s.set_defaults(func=cmd_import)
