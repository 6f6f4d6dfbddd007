# SPDX-License-Identifier: BSD-3-Clause
"""The options of a run (`mpiscope run`, `mpiscope sbatch`), and the typed
request they make (measure/request.py): what reaches measure/ is that
request, never the parsed options."""

import dataclasses

from mpiscope.cli import types
from mpiscope.cli.options import add_json, add_mpi, add_out, add_seed
from mpiscope.measure import benchmarks, loggp_options
from mpiscope.measure.launch import LAUNCHERS, MAX_LAUNCHES
from mpiscope.measure.request import LaunchRequest, MeasureRequest

DEFAULTS = MeasureRequest()


def add_run_options(p) -> None:
    """The options of a run (`mpiscope run`, `mpiscope sbatch`); their defaults are
    the request's (measure/request.py)."""
    p.add_argument("-n", "--np", type=types.count(1), help="number of ranks (default: CPUs here, at least 2)")
    add_mpi(p)
    p.add_argument(
        "--launcher",
        default=LAUNCHERS[0],
        choices=LAUNCHERS,
        help="mpirun (the MPI's mpirun / mpiexec) or srun (Slurm); default mpirun",
    )
    p.add_argument(
        "--mpirun",
        metavar="PROGRAM",
        type=types.program,
        help="launcher program to use instead of the MPI's (mpirun / mpiexec beside its mpicc)",
    )
    p.add_argument(
        "--hostfile",
        type=types.text_file,
        help="hosts and slots: 'host slots=N' (Open MPI), 'host:N' (MPICH) or "
        "a host a line; converted to the launcher's syntax",
    )
    p.add_argument(
        "-N",
        "--nodes",
        type=types.count(1),
        help="nodes to run on (the launcher's own option: srun --nodes, or the first N "
        "hosts of the hostfile or allocation); -n defaults to nodes x ppn",
    )
    p.add_argument(
        "--ppn",
        type=types.count(1),
        help="ranks per node (srun --ntasks-per-node, mpirun --map-by ppr:N:node, mpiexec.hydra -ppn)",
    )
    p.add_argument(
        "--launcher-args",
        metavar="WORDS",
        type=types.word_list,
        help="more options for the launcher, split as a shell would and passed as words "
        '(no shell), e.g. "--mca btl tcp,self -x UCX_TLS"',
    )
    p.add_argument(
        "--cluster",
        metavar="NAME",
        type=types.cluster_name,
        help="run on the emulated cluster NAME (see 'mpiscope cluster up'), one rank per slot; "
        "-n defaults to all its slots",
    )
    p.add_argument(
        "--suite",
        default=DEFAULTS.suite,
        choices=sorted(benchmarks.SUITES),
        help="benchmarks and sizes when --bench and --sizes are not given: quick "
        "(default; the common operations, 1 B-256 KiB), full (every benchmark, "
        "1 B-4 MiB), loggp (mpiscope loggp and layers), transport (the transport "
        "lab's designs)",
    )
    p.add_argument(
        "--bench",
        type=types.names("benchmark"),
        help="comma list of benchmarks (the list: `mpiscope-engine --describe`, "
        "or the docs' reference/benchmarks page)",
    )
    p.add_argument(
        "--exclude",
        metavar="LIST",
        type=types.word_list,
        help="comma list of benchmarks to leave out of the suite or the --bench list",
    )
    p.add_argument(
        "--sizes", type=types.size_list, help="message sizes: 8,1K,1M or ranges 1-4M:x2, 0-64:+8 (units B/K/M/G)"
    )
    p.add_argument(
        "--pairs", metavar="FILE", type=types.text_file, help="pairs file for the 'pairs' benchmark: two ranks a line"
    )
    p.add_argument(
        "--sync",
        choices=("auto", "window", "barrier"),
        help="start of each repetition: window (agreed global time), barrier, or auto "
        "(default): window, but barrier for a series whose repetitions last 200x "
        "the barrier's measured exit skew (at least 1 us)",
    )
    p.add_argument(
        "--start-barrier",
        default=DEFAULTS.start_barrier,
        choices=("mpi", "own"),
        help="the barrier that starts repetitions (--sync barrier, and the warm-up's): "
        "mpi (default) MPI_Barrier, as IMB; own: a dissemination barrier of empty "
        "messages, which a forced or tuned barrier algorithm does not change",
    )
    p.add_argument(
        "--timer",
        default=DEFAULTS.timer,
        choices=("tsc", "clock", "wtime"),
        help="local timer: tsc (default): the CPU's counter (x86-64 TSC, aarch64 CNTVCT_EL0, "
        "ppc64le time base), or clock_gettime where that is absent or not invariant (the run "
        "says why); clock: clock_gettime(CLOCK_MONOTONIC_RAW); wtime: MPI_Wtime",
    )
    p.add_argument(
        "--clock-sync",
        default=DEFAULTS.clock_sync,
        choices=("auto", "tree", "star"),
        help="which ranks measure clock offsets with which: tree (binomial, O(log p) rounds of "
        "concurrent pairs), star (every rank with rank 0, one at a time), auto (default): "
        "tree, but star when ranks outnumber a machine's CPUs",
    )
    p.add_argument(
        "--cache",
        default=DEFAULTS.cache,
        choices=("warm", "cold"),
        help="warm: same buffers every repetition; cold: rotate through 4x the last-level cache",
    )
    p.add_argument(
        "--huge-pages",
        action="store_true",
        help="message buffers 2 MiB-aligned and advised for transparent huge pages on every rank "
        "(fewer pages for process_vm_readv to pin); the run records the KiB the kernel granted",
    )
    p.add_argument(
        "--reps-min",
        type=types.count(1, types.MAX_REPS),
        default=DEFAULTS.reps_min,
        help="repetitions at least (default 10)",
    )
    p.add_argument(
        "--reps-max",
        type=types.count(1, types.MAX_REPS),
        default=DEFAULTS.reps_max,
        help="repetitions at most (default 100000)",
    )
    p.add_argument(
        "--ci-width",
        type=types.fraction,
        default=DEFAULTS.ci_width,
        help="stop when the 95%% CI of the median is within ±this fraction (default 0.02)",
    )
    p.add_argument(
        "--time-budget",
        type=types.seconds,
        default=DEFAULTS.time_budget,
        help="seconds at most per benchmark x size (default 1)",
    )
    p.add_argument(
        "--warmup",
        type=types.count(0, types.MAX_REPS),
        default=DEFAULTS.warmup,
        help="unrecorded repetitions first (default 5)",
    )
    p.add_argument(
        "--launches",
        type=types.count(1, MAX_LAUNCHES),
        default=DEFAULTS.launches,
        help="separate launches stored as one run, to see launch-to-launch variation",
    )
    p.add_argument("--check", action="store_true", help="verify every received message and result")
    p.add_argument("--root-rotate", action="store_true", help="rotate the root of rooted collectives")
    p.add_argument(
        "--clock-inject",
        metavar="US:PPM",
        type=types.clock_inject,
        help="test the clock sync: add a seeded random offset (up to US microseconds) and "
        "drift (up to PPM) to every rank's timer; the context records the recovery error",
    )
    p.add_argument(
        "--refine",
        action="store_true",
        help="after the sizes asked for, add sizes where the curve departs from the line "
        "through its neighbours (as mpptest and SKaMPI do)",
    )
    p.add_argument(
        "--refine-threshold",
        type=types.positive,
        default=DEFAULTS.refine_threshold,
        help="relative departure that triggers refinement (default 0.1)",
    )
    p.add_argument(
        "--refine-max",
        type=types.count(1),
        default=DEFAULTS.refine_max,
        help="sizes added at most per benchmark (default 8)",
    )
    p.add_argument(
        "--label",
        metavar="TEXT",
        type=types.label,
        help="a name for the run, stored in its context and listed by `mpiscope runs`; "
        "it can name the run wherever a RUN is asked for",
    )
    add_seed(p, "seed for everything random")
    add_out(p)
    add_json(p, "print the summary as JSON")
    _add_measure_options(p)


def _add_measure_options(p) -> None:
    """The options of the LogGP benchmarks (measure/loggp_options.py), our own
    collective algorithms (algo_options.py) and the peers' methods (method_options.py)."""
    p.add_argument(
        "--queue-depths",
        metavar="LIST",
        type=types.checked(loggp_options.parse_queue_depths, "number_list"),
        help="flood: sends kept outstanding, one variant each (q1, q2, …); the largest "
        "is also rma_flood's flush interval (default 1,2,4,8,16,32,64)",
    )
    p.add_argument(
        "--overhead-steps",
        metavar="LIST",
        type=types.checked(loggp_options.parse_overhead_steps, "number_list"),
        help="overhead: computation inserted per message, in multiples of the time per "
        "message without it (default 0,0.5,1,1.5,2,3)",
    )
    p.add_argument(
        "--flood-bytes",
        metavar="SIZE",
        type=types.positive_size,
        help="flood, overhead, rma_flood: bytes one repetition sends at most (default "
        "8M; at most 256 and at least 4 and two queues of messages)",
    )
    p.add_argument(
        "--algo",
        metavar="LIST",
        type=types.names("algorithm"),
        help="collectives: algorithms to measure as well as or instead of the "
        "library's own: names, mpi (the library's, the default) or all (the list "
        "per collective: `mpiscope-engine --describe`, or the docs' "
        "reference/benchmarks page)",
    )
    p.add_argument(
        "--segment",
        metavar="SIZE",
        type=types.positive_size,
        help="bytes per segment of pipelined algorithms (bcast pipelined_chain; default 8K)",
    )
    p.add_argument(
        "--trace",
        action="store_true",
        help="record every send and receive of our own algorithms (for `mpiscope timechart` and the report)",
    )
    p.add_argument(
        "--methods",
        metavar="LIST",
        type=types.names("method"),
        help="also time every benchmark as peer tools do, for `mpiscope methods`: "
        "osu, imb, skampi, mpptest, mpibench (comma list) or all; default: none, "
        "mpiscope's own series only",
    )


def measure_request(args) -> MeasureRequest:
    """The request the parsed options of a run make (the options' checks,
    types.py, already passed)."""
    return _request(MeasureRequest, args, launch=_request(LaunchRequest, args))


def _request(cls, args, **given):
    """A `cls` from the parsed options of the same names; those the command
    lacks keep the request's defaults."""
    names = [f.name for f in dataclasses.fields(cls) if f.name not in given]
    return cls(**{n: getattr(args, n) for n in names if hasattr(args, n)}, **given)
