# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope app compare [options] -- LAUNCH COMMAND…`: a real application
under several configurations, launched in interleaved rounds, judged by
the speedup of each against the default; stored as a run of kind "app"
(`mpiscope show RUN` shows it again)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mpiscope.cli.commands import command_parser
from mpiscope.cli import types
from mpiscope.cli.options import RUN_REF, add_bootstrap, add_json, add_mpi, add_out, check_bootstrap
from mpiscope.common.errors import UsageError

TUNED = "tuned"  # the configuration --tune adds when no --config names its directory
MAX_ROUNDS = 10_000  # rounds of launches at most
MAX_REPLICATES = 10_000  # the what-if's simulator replicates at most


def cmd_compare(args) -> int:
    from mpiscope.app.configs import parse_configs
    from mpiscope.app.launch import compile_metric, plan_start
    from mpiscope.app.schedule import StopRule
    from mpiscope.app.app_run import load
    from mpiscope.cli.percent import parse_percent
    from mpiscope.engine.mpi import find_mpi
    from mpiscope.measure.request import LaunchRequest
    from mpiscope.measure.runner import new_run_id
    from mpiscope.common.documents import json_document

    # Everything checked before anything is launched or written.
    rule = StopRule(args.ci_width, args.time_budget, args.min_rounds, args.max_rounds, args.warmup).check()
    check_bootstrap(args)
    options = {
        "noise": parse_percent(args.noise, "--noise"),
        "alpha": args.alpha,
        "level": 0.95,
        "seed": args.seed,
        "n_boot": args.resamples,
    }
    if bool(args.profile) != bool(args.tune):
        raise UsageError(
            "--profile RUN and --tune DIR go together: the prediction needs the application's "
            "profile and the tune's verification"
        )
    label = args.label  # types.label
    metric = compile_metric(args.metric)
    mpi = find_mpi(mpicc=args.mpicc, mpi=args.mpi)
    items = list(args.config or [])
    if args.tune and not _names_tune(items, args.tune):
        items.append(f"{TUNED}={args.tune}")
    configs = parse_configs(items, mpi.library)
    inputs = _prediction_inputs(args, configs) if args.tune else None
    scale = _whatif_inputs(args)
    start = plan_start(
        args.launch,
        LaunchRequest(
            installation=mpi,
            cluster=args.cluster,
            np=args.np,
            hostfile=args.hostfile,
            launcher=args.launcher,
            launcher_args=args.launcher_args,
        ),
    )
    # the measurement's modules (SciPy among them) once the input has passed
    from mpiscope.app.compare import base_context, measure, prediction_of, whatif_of
    from mpiscope.views.app import app_doc, format_app

    context = base_context(
        run_id=new_run_id(),
        label=label,
        argv=sys.argv,
        start=start,
        configs=configs,
        rule=rule,
        options=options,
        metric=metric,
        mpi=mpi,
        timeout=args.launch_timeout,
    )
    predicting = (
        None if inputs is None else (lambda answer: prediction_of(inputs, answer, metric is not None, args.seed))
    )
    scaling = None if scale is None else (lambda: whatif_of(scale))
    run_dir = measure(
        start,
        configs,
        rule,
        options,
        out=Path(args.out),
        context=context,
        metric=metric,
        timeout=args.launch_timeout,
        predicting=predicting,
        scaling=scaling,
    )
    doc = app_doc(load(run_dir))
    sys.stdout.write(json_document("app", doc) if args.json else format_app(doc))
    print(f"mpiscope: stored {run_dir}", file=sys.stderr)
    return _report_status(doc, args.json)


def _report_status(doc, as_json) -> int:
    """Warnings for the launches that do not count (the text names them
    itself), an error for a failed run or a configuration without a valid
    launch; the exit code."""
    from mpiscope.views.app import not_counted

    for line in not_counted(doc) if as_json else ():
        print(f"mpiscope: warning: {line}", file=sys.stderr)
    empty = [r["config"] for r in doc["results"] if r["n"] == 0]
    if doc["status"] != "completed":
        print(f"mpiscope: error: {doc['error']}", file=sys.stderr)
    elif empty:
        print(
            f"mpiscope: error: no valid launch of {', '.join(empty)}: each of its launches is named with why",
            file=sys.stderr,
        )
    return 1 if doc["status"] != "completed" or empty else 0


def _names_tune(items, tune) -> bool:
    """Whether a --config item's SPEC is the --tune directory."""
    return any(
        Path(spec.strip()).expanduser().resolve() == Path(tune).expanduser().resolve()
        for _, _, spec in (str(i).partition("=") for i in items)
    )


def _prediction_inputs(args, configs):
    """(name, profile, tune): the configuration whose SPEC is the tune
    directory, the profile's times and the tune's verified cells, read now so
    that a bad one stops before any launch."""
    from mpiscope.app.profile_cells import profile_times
    from mpiscope.app.tune_cells import read_tune
    from mpiscope.store import catalog

    tune_dir = Path(args.tune).expanduser().resolve()
    name = next(c.name for c in configs if c.kind == "tune" and Path(c.source) == tune_dir)
    profile = profile_times(catalog.resolve(args.out, args.profile))
    return name, profile, read_tune(tune_dir)


def _whatif_inputs(args):
    """--whatif-p's inputs, checked now (a traced --profile, rank counts it
    replicates to, a --from-run with a pingpong), or None without it."""
    if args.whatif_p is None:
        if args.from_run or args.p2p != "pingpong":
            given = "--from-run" if args.from_run else "--p2p"
            raise UsageError(f"{given} gives the costs of the what-if: give --whatif-p P,… with it")
        return None
    from mpiscope.app.compare import WhatIfInputs
    from mpiscope.app.trace_pattern import traced_pattern
    from mpiscope.sim.measured import fitted_costs, p2p_quantiles
    from mpiscope.store import catalog

    if not args.tune or not args.from_run:
        raise UsageError(
            "--whatif-p needs --profile RUN (traced: mpiscope profile --trace), --tune DIR and "
            "--from-run RUN (a run with pingpong on the same machine: the costs)"
        )
    ps = args.whatif_p  # distinct rank counts, sorted (types.rank_counts)
    trace_run = catalog.resolve(args.out, args.profile)
    traced_p = traced_pattern(trace_run).pattern.p
    bad = [q for q in ps if q % traced_p]
    if bad:
        raise UsageError(
            f"--whatif-p {','.join(map(str, bad))}: the traced profile has {traced_p} ranks; the "
            f"what-if replicates it, so give multiples of {traced_p}"
        )
    costs_run = catalog.resolve(args.out, args.from_run)
    fitted_costs(costs_run, args.p2p), p2p_quantiles(costs_run, args.p2p)  # a run without it stops here
    return WhatIfInputs(
        trace_run, Path(args.tune).expanduser().resolve(), ps, costs_run, args.p2p, args.replicates, args.seed
    )


def add_app_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "app",
        description="""\
A real application under several configurations.
  compare  launch it under each configuration in interleaved rounds and
           judge the speedup of each against the default\
""",
        epilog="""\
examples:
  mpiscope app compare --config tuned=tune-out/ -- mpirun -n 4 lmp -in in.lj
  mpiscope app compare --config tuned=tune-out/ --metric 'Loop time of ([0-9.]+)' --cluster c2 -- lmp -in in.lj
  mpiscope app compare --config cma=advice.json --config a=env.sh --json -- mpirun -n 2 ./app\
""",
    )
    sub = p.add_subparsers(dest="app_command", metavar="SUBCOMMAND", parser_class=subparsers._parser_class)
    sub.required = True
    c = sub.add_parser(
        "compare",
        help="launch an application under several configurations and judge each one's speedup against the default",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""\
Launch an application under every configuration (--config NAME=SPEC; the
default, which changes nothing, is always one) in interleaved rounds:
A B C, A B C, … after --warmup rounds that are not counted. Every launch
gives one value: its wall time, or with --metric the number the
application prints. Per configuration: the median of its launches and
the speedup against the default (default's median / its median) with a
95% bootstrap interval over launches, a Mann-Whitney test and a verdict:
faster or slower only when p < alpha AND the whole interval lies outside
1 ± noise, as `mpiscope compare` judges. After --min-rounds rounds,
measuring stops when every speedup's interval is within ±--ci-width of
it, at --max-rounds, or before a round that would pass --time-budget.
A launch that fails (exit code) or whose metric is missing is stored and
named, never counted. The run is stored (kind "app"); `mpiscope show RUN`
shows it again.

SPEC: default; a tune's output directory (its env.sh); `mpiscope transport
advise --json` output (.json); an MCA parameter file (.conf, name = value
lines); or a file of `export NAME=VALUE` lines.

The command after -- is your launch command (mpirun -n 4 ./app; srun
./app inside an allocation). With --cluster, --hostfile, -n or
--launcher it is the application alone, and mpiscope starts it as
`mpiscope run` starts the engine.\
""",
        epilog="""\
examples:
  mpiscope app compare --config tuned=tune-out/ -- mpirun -n 4 lmp -in in.lj
  mpiscope app compare --config tuned=tune-out/ --metric 'Loop time of ([0-9.]+)' -- mpirun -n 4 lmp -in in.lj
  mpiscope app compare --config cma=advice.json --cluster c2 -n 4 -- ./app
  mpiscope app compare --profile lj --tune tune-out/ -- mpirun -n 4 lmp -in in.lj
  mpiscope app compare --profile lj --tune tune-out/ --whatif-p 16,64 --from-run pp -- mpirun -n 4 lmp -in in.lj\
""",
    )
    c.add_argument(
        "--config",
        action="append",
        metavar="NAME=SPEC",
        type=types.text,
        help="a configuration to compare with the default (repeat it for more)",
    )
    c.add_argument(
        "--metric",
        metavar="REGEX",
        type=types.metric,
        help="the application's own figure instead of the wall time: the first group of the "
        "last match in its stdout (else its stderr), a number, lower is better",
    )
    c.add_argument(
        "--ci-width",
        type=types.fraction,
        default=0.02,
        help="stop when every speedup's 95%% interval is within ±this fraction of it (default 0.02)",
    )
    c.add_argument(
        "--time-budget",
        type=types.seconds,
        default=600.0,
        help="seconds at most, warm-up included: no round starts that would end later (default 600)",
    )
    c.add_argument(
        "--min-rounds", type=types.count(1, MAX_ROUNDS), default=3, help="counted rounds at least (default 3)"
    )
    c.add_argument(
        "--max-rounds", type=types.count(1, MAX_ROUNDS), default=50, help="counted rounds at most (default 50)"
    )
    c.add_argument(
        "--warmup", type=types.count(0, MAX_ROUNDS), default=1, help="rounds first that are not counted (default 1)"
    )
    c.add_argument(
        "--noise",
        default="2%",
        type=types.percent,
        help="noise band: speedups within 1 ± this are 'same'; 2%% or 0.02 (default: 2%%)",
    )
    c.add_argument("--alpha", default=0.05, type=types.level, help="significance level of the test (default: 0.05)")
    add_bootstrap(c, 2000)
    c.add_argument(
        "--launch-timeout",
        type=types.seconds,
        metavar="S",
        help="a launch running longer than S seconds is killed and counts as failed",
    )
    c.add_argument(
        "--profile",
        metavar="RUN",
        type=types.run_ref,
        help=f"with --tune: predict the tuned speedup from this profile of the application: {RUN_REF}",
    )
    c.add_argument(
        "--tune",
        metavar="DIR",
        type=types.tune_dir,
        help="with --profile: the tune whose verified cells predict its speedup (compared with the "
        f"--config whose SPEC is DIR, else added as '{TUNED}')",
    )
    c.add_argument(
        "--whatif-p",
        metavar="P,…",
        type=types.rank_counts,
        help="with --profile (traced) and --tune: also the what-if at these rank counts (as `mpiscope "
        "sim whatif`, messages above the MPI library's eager limit on the traced transport by rendezvous), "
        "stored with the run for its report",
    )
    c.add_argument(
        "--from-run",
        metavar="RUN",
        type=types.run_ref,
        help="with --whatif-p: the run whose --p2p benchmark gives the simulator's costs (its Hockney "
        "fit) and every message's time (drawn from its distributions)",
    )
    c.add_argument(
        "--p2p",
        choices=("pingpong", "ring"),
        default="pingpong",
        help="with --whatif-p: --from-run's point-to-point benchmark: pingpong (one message, the other "
        "ranks idle) or ring (every rank's message at once, as the application's ranks communicate; "
        "measure it at the traced rank count) (default: %(default)s)",
    )
    c.add_argument(
        "--replicates",
        type=types.count(1, MAX_REPLICATES),
        default=10,
        help="with --whatif-p: the simulator's replicates (default: %(default)s)",
    )
    c.add_argument(
        "--cluster",
        metavar="NAME",
        type=types.cluster_name,
        help="start the application on the emulated cluster NAME, one rank a slot",
    )
    c.add_argument(
        "-n", dest="np", type=types.count(1), metavar="N", help="ranks (with --cluster default: all its slots)"
    )
    c.add_argument(
        "--hostfile",
        type=types.text_file,
        metavar="FILE",
        help="hosts and slots, converted to the launcher's syntax (the application alone after --)",
    )
    c.add_argument(
        "--launcher",
        choices=("mpirun", "srun"),
        help="start the application with the MPI's own mpirun/mpiexec or with Slurm's srun",
    )
    c.add_argument("--launcher-args", metavar="WORDS", type=types.word_list, help="more options for that launcher")
    c.add_argument("--label", metavar="TEXT", type=types.label, help="a name for the run")
    add_mpi(c)
    add_json(c, "print the answer as JSON (the app document)")
    add_out(c)
    c.add_argument(
        "launch",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND",
        help="the launch command, as you would run it (or the application alone: see above)",
    )
    c.set_defaults(func=cmd_compare)
