# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope run`: measure, store, summarize."""

import sys

from mpiscope.cli import types
from mpiscope.cli.options import add_json, add_mpi, add_out, add_seed
from mpiscope.measure import algo_options, benchmarks, loggp_options, method_options
from mpiscope.measure.launch import LAUNCHERS, MAX_LAUNCHES
from mpiscope.cli.commands import command_parser


def add_run_command(subparsers) -> None:
    p = command_parser(subparsers, "run", cmd_run,
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
""")
    add_run_options(p)
    p.add_argument("--dry-run", action="store_true",
                   help="print the launcher command lines, the planned series and an estimate of "
                        "the wall time; run nothing")


def add_run_options(p) -> None:
    """The options of a run (`mpiscope run`, `mpiscope sbatch`)."""
    p.add_argument("-n", "--np", type=types.count(1), help="number of ranks (default: CPUs here, at least 2)")
    add_mpi(p)
    p.add_argument("--launcher", default="mpirun", choices=LAUNCHERS,
                   help="mpirun (the MPI's mpirun / mpiexec) or srun (Slurm); default mpirun")
    p.add_argument("--mpirun", metavar="PROGRAM", type=types.program,
                   help="launcher program to use instead of the MPI's (mpirun / mpiexec beside its mpicc)")
    p.add_argument("--hostfile", type=types.text_file,
                   help="hosts and slots: 'host slots=N' (Open MPI), 'host:N' (MPICH) or "
                        "a host a line; converted to the launcher's syntax")
    p.add_argument("-N", "--nodes", type=types.count(1),
                   help="nodes to run on (the launcher's own option: srun --nodes, or the first N "
                        "hosts of the hostfile or allocation); -n defaults to nodes x ppn")
    p.add_argument("--ppn", type=types.count(1), help="ranks per node (srun --ntasks-per-node, mpirun --map-by "
                                           "ppr:N:node, mpiexec.hydra -ppn)")
    p.add_argument("--launcher-args", metavar="WORDS", type=types.word_list,
                   help="more options for the launcher, split as a shell would and passed as words "
                        "(no shell), e.g. \"--mca btl tcp,self -x UCX_TLS\"")
    p.add_argument("--cluster", metavar="NAME", type=types.cluster_name,
                   help="run on the emulated cluster NAME (see 'mpiscope cluster up'), one rank per slot; "
                        "-n defaults to all its slots")
    p.add_argument("--suite", default="quick", choices=sorted(benchmarks.SUITES),
                   help="benchmarks and sizes when --bench and --sizes are not given: quick "
                        "(default; the common operations, 1 B-256 KiB), full (every benchmark, "
                        "1 B-4 MiB), loggp (mpiscope loggp and layers), transport (the transport "
                        "lab's designs)")
    p.add_argument("--bench", type=types.names("benchmark"),
                   help="comma list of benchmarks (the list: `mpiscope-engine --describe`, "
                        "or the docs' reference/benchmarks page)")
    p.add_argument("--exclude", metavar="LIST", type=types.word_list,
                   help="comma list of benchmarks to leave out of the suite or the --bench list")
    p.add_argument("--sizes", type=types.size_list,
                   help="message sizes: 8,1K,1M or ranges 1-4M:x2, 0-64:+8 (units B/K/M/G)")
    p.add_argument("--pairs", metavar="FILE", type=types.text_file,
                   help="pairs file for the 'pairs' benchmark: two ranks a line")
    p.add_argument("--sync", choices=("auto", "window", "barrier"),
                   help="start of each repetition: window (agreed global time), barrier, or auto "
                        "(default): window, but barrier for a series whose repetitions last 200x "
                        "the barrier's measured exit skew (at least 1 us)")
    p.add_argument("--start-barrier", default="mpi", choices=("mpi", "own"),
                   help="the barrier that starts repetitions (--sync barrier, and the warm-up's): "
                        "mpi (default) MPI_Barrier, as IMB; own: a dissemination barrier of empty "
                        "messages, which a forced or tuned barrier algorithm does not change")
    p.add_argument("--timer", default="tsc", choices=("tsc", "clock", "wtime"),
                   help="local timer: tsc (default): the CPU's counter (x86-64 TSC, aarch64 CNTVCT_EL0, "
                        "ppc64le time base), or clock_gettime where that is absent or not invariant (the run "
                        "says why); clock: clock_gettime(CLOCK_MONOTONIC_RAW); wtime: MPI_Wtime")
    p.add_argument("--clock-sync", default="auto", choices=("auto", "tree", "star"),
                   help="which ranks measure clock offsets with which: tree (binomial, O(log p) rounds of "
                        "concurrent pairs), star (every rank with rank 0, one at a time), auto (default): "
                        "tree, but star when ranks outnumber a machine's CPUs")
    p.add_argument("--cache", default="warm", choices=("warm", "cold"),
                   help="warm: same buffers every repetition; cold: rotate through 4x the last-level cache")
    p.add_argument("--huge-pages", action="store_true",
                   help="message buffers 2 MiB-aligned and advised for transparent huge pages on every rank "
                        "(fewer pages for process_vm_readv to pin); the run records the KiB the kernel granted")
    p.add_argument("--reps-min", type=types.count(1, types.MAX_REPS), default=10,
                   help="repetitions at least (default 10)")
    p.add_argument("--reps-max", type=types.count(1, types.MAX_REPS), default=100000,
                   help="repetitions at most (default 100000)")
    p.add_argument("--ci-width", type=types.fraction, default=0.02,
                   help="stop when the 95%% CI of the median is within ±this fraction (default 0.02)")
    p.add_argument("--time-budget", type=types.seconds, default=1.0,
                   help="seconds at most per benchmark x size (default 1)")
    p.add_argument("--warmup", type=types.count(0, types.MAX_REPS), default=5,
                   help="unrecorded repetitions first (default 5)")
    p.add_argument("--launches", type=types.count(1, MAX_LAUNCHES), default=1,
                   help="separate launches stored as one run, to see launch-to-launch variation")
    p.add_argument("--check", action="store_true", help="verify every received message and result")
    p.add_argument("--root-rotate", action="store_true", help="rotate the root of rooted collectives")
    p.add_argument("--clock-inject", metavar="US:PPM", type=types.clock_inject,
                   help="test the clock sync: add a seeded random offset (up to US microseconds) and "
                        "drift (up to PPM) to every rank's timer; the context records the recovery error")
    p.add_argument("--refine", action="store_true",
                   help="after the sizes asked for, add sizes where the curve departs from the line "
                        "through its neighbours (as mpptest and SKaMPI do)")
    p.add_argument("--refine-threshold", type=types.positive, default=0.1,
                   help="relative departure that triggers refinement (default 0.1)")
    p.add_argument("--refine-max", type=types.count(1), default=8,
                   help="sizes added at most per benchmark (default 8)")
    p.add_argument("--label", metavar="TEXT", type=types.label,
                   help="a name for the run, stored in its context and listed by `mpiscope runs`; "
                        "it can name the run wherever a RUN is asked for")
    add_seed(p, "seed for everything random")
    add_out(p)
    add_json(p, "print the summary as JSON")
    loggp_options.add_run_options(p)
    algo_options.add_run_options(p)
    method_options.add_run_options(p)
    for action in p._actions:  # the options measure/ defines, typed as every option is
        action.type = _measure_types().get(action.dest, action.type)


def _measure_types():
    return {"queue_depths": types.checked(loggp_options.parse_queue_depths, "number_list"),
            "overhead_steps": types.checked(loggp_options.parse_overhead_steps, "number_list"),
            "flood_bytes": types.positive_size, "segment": types.positive_size, "algo": types.names("algorithm"),
            "methods": types.names("method")}


def cmd_run(args):
    from mpiscope.measure import runner
    from mpiscope.measure.plan import make_plan
    from mpiscope.store.run import Run
    from mpiscope.store.samples import table_context
    from mpiscope.views import show as views

    plan = make_plan(args)
    if args.dry_run:
        from mpiscope.measure import preview

        print(preview.as_json(plan) if args.json else preview.as_text(plan))
        return 0
    run_dir, context, stored = runner.measure(plan, sys.argv)
    # what ingest learnt from the raw files (the --sync used, the clock) beside the context
    run = Run.from_context({**table_context(stored.table), **context} if stored else context, run_dir)
    if stored and stored.verdicts is not None:  # the summary from memory, as show_rows reads it back
        rows = views.rows_of(stored.table, Run.from_context(table_context(stored.table), run_dir),
                             stored.series, stored.verdicts)
    else:
        rows = views.show_rows(run_dir)
    if args.json:
        from mpiscope.views.export import show_json

        sys.stdout.write(show_json(rows, run))  # the document of show --json
    else:
        print(views.format_show(rows, run))
        print(f"\nrun {run.run_id} stored in {run_dir}")
    for note in views.notes(rows, run, status=False):  # as `show`; a failure is said below
        print(f"mpiscope: warning: {note}", file=sys.stderr)
    if run.status != "completed":
        sys.stderr.write(f"mpiscope: run failed: {run.error}\n")
        if context.get("failed_launch") is not None:
            output = runner.launcher_output(run_dir, context["failed_launch"])
            if output.strip():  # empty too when the disk was full: the error above says why
                sys.stderr.write(f"what the launcher wrote on stderr:\n{output}"
                                 + ("" if output.endswith("\n") else "\n"))
        sys.stderr.write(f"what was measured is stored in {run_dir} (status: failed)\n")
        return 1
    return 0
