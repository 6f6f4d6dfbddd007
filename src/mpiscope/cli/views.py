# SPDX-License-Identifier: BSD-3-Clause
"""The read-only subcommands: show, export.

Each handler takes the parsed arguments and returns an exit code; bad input
raises UsageError, which the main CLI turns into a message and exit code 2.
"""

from __future__ import annotations

import sys

from mpiscope.cli.commands import command_parser
from mpiscope.cli import types
from mpiscope.cli.options import add_json, add_out, add_run, output_file
from mpiscope.common.errors import UsageError


def cmd_show(args) -> int:
    from mpiscope.store.run_refs import resolve_dir
    from mpiscope.views.run_kind import run_kind
    from mpiscope.views.show_cache import shown
    from mpiscope.views.show_text import show_document

    run_dir = resolve_dir(args.out, args.run)  # a str, as pathlib writes it (pathlib is not imported)
    kind = run_kind(run_dir)
    if kind in ("profile", "app", "imported"):
        from pathlib import Path

        return _SHOW_KIND[kind](Path(run_dir), args.json)
    kept = shown(run_dir)  # kept in the run, or computed from its samples
    if args.json:
        sys.stdout.write(show_document(kept.run_id, run_dir, kept.context, kept.rows, kept.summary))
    else:
        sys.stdout.write(kept.text)
    for note in kept.notes:
        print(f"mpiscope: warning: {note}", file=sys.stderr)
    return 0


def _show_profile(run_dir, as_json) -> int:
    from mpiscope.profile import summary
    from mpiscope.common.documents import json_document
    from mpiscope.views.profile import format_profile, profile_doc

    p = summary.load(run_dir)
    sys.stdout.write(json_document("profile", profile_doc(p)) if as_json else format_profile(p))
    for r in p.context.get("missing_ranks") or []:
        print(
            f"mpiscope: warning: rank {r} wrote no profile (it did not reach MPI_Finalize); its calls are missing",
            file=sys.stderr,
        )
    return 0


def _show_app(run_dir, as_json) -> int:
    from mpiscope.app.app_run import load
    from mpiscope.views.app import app_doc, format_app, not_counted
    from mpiscope.common.documents import json_document

    doc = app_doc(load(run_dir))
    sys.stdout.write(json_document("app", doc) if as_json else format_app(doc))
    for line in not_counted(doc) if as_json else ():  # the text names them itself
        print(f"mpiscope: warning: {line}", file=sys.stderr)
    return 0


def _show_imported(run_dir, as_json) -> int:
    from pathlib import Path

    from mpiscope.imports.imported_runs import IMPORTED_FILE, read_imported
    from mpiscope.store.series import open_run
    from mpiscope.views.imported import format_imported

    if as_json:
        raise UsageError(
            f"{run_dir} is an imported run: its values are the JSON document "
            f"{Path(run_dir) / IMPORTED_FILE}; `mpiscope show RUN` without --json "
            "prints them"
        )
    doc = read_imported(run_dir)
    sys.stdout.write(format_imported(open_run(run_dir).context, doc))
    return 0


_SHOW_KIND = {"profile": _show_profile, "app": _show_app, "imported": _show_imported}


def cmd_export(args) -> int:
    from pathlib import Path

    from mpiscope.common.atomic import write_text
    from mpiscope.views import exporters
    from mpiscope.store import catalog

    exporter = exporters.get(args.format)
    to_stdout = args.output in (None, "-")
    # A directory format takes -o DIR as it is (a trailing '/' fits it); a stream format a file.
    target = None if to_stdout or exporter.writes_directory else output_file(args.output)
    run_dir = catalog.resolve(args.out, args.run)
    directory = Path(args.output) if exporter.writes_directory and not to_stdout else None
    text, notes = exporter.export(run_dir, args.bench, directory)
    for note in notes:
        print(f"mpiscope: note: {note}", file=sys.stderr)
    if exporter.writes_directory:
        sys.stderr.write(text)  # what it wrote
    elif target is None:
        sys.stdout.write(text)
    else:
        write_text(target, text)
    return 0


def add_show_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "show",
        cmd_show,
        description="""\
Summarize a run. Per benchmark and message size: valid and invalid
samples, min, median with its 95% confidence interval (distribution-
free, from order statistics), p90, p99, max, why measuring stopped and
the series' quality flags. Latencies in microseconds, bandwidths in MB/s
(1e6 bytes/s). Warnings go to stderr: crashed ranks, and one line per
kind of quality flag with the option that addresses it.\
""",
        epilog="""\
examples:
  mpiscope show
  mpiscope show 2024 --json
  mpiscope show mpiscope-runs/<run_id>\
""",
    )
    add_run(p)
    add_json(p, "print the summary rows and the run context as JSON")
    add_out(p)


def _formats_help() -> str:
    """Each export format's name and what it writes, from the registry."""
    from mpiscope.views import exporters

    width = max(map(len, exporters.NAMES))
    lines = []
    for name in exporters.NAMES:
        first, *rest = exporters.get(name).help.splitlines()
        lines += [f"  {name:<{width}} {first}", *(f"  {'':<{width}} {line}" for line in rest)]
    return "\n".join(lines)


def add_export_command(subparsers) -> None:
    from mpiscope.views import exporters  # here, not at the top: `show` never needs the registry

    p = command_parser(
        subparsers,
        "export",
        cmd_export,
        description="Export a run.\n" + _formats_help(),
        epilog="""\
examples:
  mpiscope export latest --format osu --bench pingpong
  mpiscope export 2024 --format csv -o samples.csv
  mpiscope export latest --format otf2 -o app-trace\
""",
    )
    add_run(p)
    p.add_argument("--format", required=True, choices=exporters.NAMES, help="output format")
    p.add_argument(
        "--bench",
        type=types.text,
        help="--format osu: the benchmark to print (pingpong, bw, bibw, or a collective of the MPI library)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        type=types.output_path,
        help="write to FILE (replaced atomically) instead of stdout; --format otf2: the archive's new directory",
    )
    add_out(p)
