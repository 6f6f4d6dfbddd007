# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope run`: measure, store, summarize."""

import gc
import sys

from mpiscope.cli import run_exit
from mpiscope.cli.commands import command_parser
from mpiscope.cli.run_options import add_run_options, measure_request


def add_run_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "run",
        cmd_run,
        description="""\
Measure MPI communication. Every repetition is timed on every rank against a globally
synchronized clock and stored; a summary table is printed at the end.\
""",
        epilog="""\
examples:
  mpiscope run -n 2 --bench pingpong,bw --sizes 1-4M:x2
  mpiscope run -n 4 --bench allreduce --sizes 8,1K,1M --check
  mpiscope run -n 2 --bench pingpong,allreduce --sizes 8,64K --methods osu,imb
  mpiscope run -n 2 --mpi mpich --suite quick
  mpiscope run -n 2 --mpicc /opt/mpich/bin/mpicc --bench pingpong
  mpiscope run -N 2 --ppn 1 --launcher srun --bench pingpong     (inside salloc)
  mpiscope run --hostfile hosts --launcher-args "--mca btl tcp,self" --dry-run\
""",
    )
    add_run_options(p)
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the launcher command lines, the planned series and an estimate of the wall time; run nothing",
    )


def cmd_run(args):
    from mpiscope.measure import runner
    from mpiscope.measure.plan import make_plan

    plan = make_plan(measure_request(args))
    if args.dry_run:
        from mpiscope.measure import preview

        print(preview.as_json(plan) if args.json else preview.as_text(plan))
        return 0
    # The summary's modules load during the launch (runner.measure's preload).
    run_dir, context, stored = runner.measure(plan, sys.argv, preload=("mpiscope.views.show",))
    from mpiscope.store.run import Run
    from mpiscope.store.samples import table_context
    from mpiscope.views import show as views
    from mpiscope.views import show_cache

    # what ingest learnt from the raw files (the --sync used, the clock) beside the context
    run = Run.from_context({**table_context(stored.table), **context} if stored else context, run_dir)
    if stored and stored.verdicts is not None:  # the summary from memory, as show_rows reads it back
        rows = views.rows_of(
            stored.table, Run.from_context(table_context(stored.table), run_dir), stored.series, stored.verdicts
        )
        show_cache.keep(run_dir, rows)  # what `mpiscope show` prints, kept in the run
    else:
        rows = views.show_rows(run_dir)
    if args.json:
        from mpiscope.views.show import show_json

        sys.stdout.write(show_json(rows, run))  # the document of show --json
    else:
        print(views.format_show(rows, run))
        print(f"\nrun {run.run_id} stored in {run_dir}")
    for note in views.notes(rows, run, status=False):  # as `show`; a failure is said below
        print(f"mpiscope: warning: {note}", file=sys.stderr)
    # The process ends with the command: the interpreter's last collections at
    # its exit then skip the objects there are (numpy's, pyarrow's, the
    # samples'), whose walk would be the longest part of the exit.
    gc.freeze()
    run_exit.finished()  # everything below only writes to stdout and stderr
    if run.status != "completed":
        sys.stderr.write(f"mpiscope: run failed: {run.error}\n")
        if context.get("failed_launch") is not None:
            output = runner.launcher_output(run_dir, context["failed_launch"])
            if output.strip():  # empty too when the disk was full: the error above says why
                sys.stderr.write(
                    f"what the launcher wrote on stderr:\n{output}" + ("" if output.endswith("\n") else "\n")
                )
        sys.stderr.write(f"what was measured is stored in {run_dir} (status: failed)\n")
        return 1
    return 0
