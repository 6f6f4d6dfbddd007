# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope report RUN [RUN…] -o report.html`."""

import argparse
from pathlib import Path

from mpiscope.store import catalog
from mpiscope.common.atomic import write_text
from mpiscope.common.errors import UsageError
from mpiscope.cli import types
from mpiscope.cli.options import add_out
from mpiscope.cli.commands import command_parser


def add_report_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "report",
        cmd_report,
        description="""\
Write one HTML file (no network needed to open it) with a section per benchmark: curves
with CI bands, distributions, per-rank views of collectives, model fits, tails and modes,
and the run context. With several runs the first is the baseline the others are compared
with.\
""",
        epilog="""\
examples:
  mpiscope report -o report.html
  mpiscope report RUN_A RUN_B -o compare.html\
""",
    )
    p.add_argument(
        "runs",
        metavar="RUN",
        nargs="*",
        default=["latest"],
        type=types.run_ref,
        help="run ids, unique prefixes, labels, paths, or 'latest' (default: latest); "
        "or directories mpiscope tune wrote (a tuning report); an app run alone (its "
        "measured and predicted speedup, the what-if, its profile and tune)",
    )
    p.add_argument(
        "-o", "--output", default="report.html", type=types.output_file, help="HTML file to write (default report.html)"
    )
    add_out(p)
    p.add_argument(
        "--jobs",
        metavar="N",
        type=types.jobs,
        default=None,
        help="worker processes drawing the figures while the runs are analysed, at most "
        "the CPUs here; 0 draws them in this process (default: 2; 0 on one CPU or "
        "for fewer than 4 benchmarks)",
    )


def write_report(run_dirs, output, jobs=None):
    """Renders the report of `run_dirs` into `output` atomically; returns its
    path. `jobs`: worker processes drawing the figures (0: none; None:
    pool.default_jobs(), or none for fewer than pool.MIN_SECTIONS benchmarks)."""
    from mpiscope.report import pool

    target = Path(output)
    if target.is_dir() or not target.parent.resolve().is_dir():
        raise UsageError(f"cannot write the report to {target}: give a file name in an existing directory")
    kinds = {_kind(d) for d in run_dirs}
    if "app" in kinds:
        if len(run_dirs) > 1:
            raise UsageError("an app run (mpiscope app compare) makes a report of its own: give that run alone")
        from mpiscope.report import app_data, render

        write_text(target, render.render("app.html.j2", app_data.gather(run_dirs[0]), target.parent))
        return target
    if "profile" in kinds:
        if len(kinds) > 1:
            raise UsageError(
                "profile runs (mpiscope profile) and measurement runs make separate reports: give runs of one kind"
            )
        from mpiscope.report import profile_data, render

        write_text(target, render.render("profile.html.j2", profile_data.gather(run_dirs), target.parent))
        return target
    if jobs is None:
        jobs = pool.default_jobs() if _sections(run_dirs) >= pool.MIN_SECTIONS else 0
    # The workers start now and import matplotlib while this process imports
    # the analysis modules (SciPy; slow, so only when needed).
    with pool.drawing(jobs):
        from mpiscope.report import data
        from mpiscope.report import render

        write_text(target, render.render("report.html.j2", data.gather(run_dirs), target.parent))
    return target


def _kind(run_dir):
    from mpiscope.common.inputs import InputError, read_json

    try:
        return read_json(Path(run_dir) / "context.json").get("kind") or "measurement"
    except (InputError, AttributeError):
        return "measurement"


def _sections(run_dirs):
    """Benchmark sections the report will have (bench × algorithm over all runs)."""
    from mpiscope.store.series import open_run

    return len({(s.bench, s.algo) for d in run_dirs for s in open_run(d).series})


def write_tune_report(tune_dirs, output):
    """The report of `mpiscope tune` outputs (directories holding tune.json)."""
    from mpiscope.report import render, tune_data

    target = Path(output)
    if target.is_dir() or not target.parent.resolve().is_dir():
        raise UsageError(f"cannot write the report to {target}: give a file name in an existing directory")
    write_text(target, render.render("tune_report.html.j2", tune_data.gather(tune_dirs), target.parent))
    return target


def _is_tune_dir(ref):
    from mpiscope.report.tune_data import RESULT

    # launches.json: a tune directory whose tune.json is gone (named by tune_dir)
    return (Path(ref) / RESULT).is_file() or (Path(ref) / "launches.json").is_file()


def cmd_report(args):
    tunes = [ref for ref in args.runs if _is_tune_dir(ref)]
    for ref in tunes:  # a damaged tune.json is named, not read half
        try:
            types.tune_dir(ref)
        except argparse.ArgumentTypeError as e:
            raise UsageError(str(e)) from None
    if tunes:
        if len(tunes) != len(args.runs):
            raise UsageError(
                "mpiscope tune outputs and runs make separate reports: give tune "
                "directories only (a report on the tune's own runs shows its section too)"
            )
        target = write_tune_report(tunes, args.output)
        print(f"report written to {target.resolve()}")
        return 0
    run_dirs = [catalog.resolve(args.out, ref) for ref in args.runs]
    if len(set(run_dirs)) != len(run_dirs):
        raise UsageError("a run is named twice; name each run once")
    target = write_report(run_dirs, args.output, args.jobs)
    print(f"report written to {target.resolve()}")
    return 0
