# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope tune`: collective-selection files the MPI library really uses,
decided by statistics and verified after writing
(docs/tutorials/tune-collectives.md, docs/explanation/tuner.md)."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from mpiscope.cli.commands import command_parser
from mpiscope.cli import types
from mpiscope.cli.options import add_json, add_mpi, add_out, add_seed
from mpiscope.common.errors import UsageError

DEFAULT_SIZES = "8-1M:x4"
MAX_REPEAT = 100  # launch rounds at most


def add_tune_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "tune",
        cmd_tune,
        description="""\
Measure every algorithm the MPI library offers for its collectives (read from the library),
decide per size with compare's verdict, write the library's own selection file, check that the
library uses it, and measure default against tuned side by side.\
""",
        epilog="""\
examples:
  mpiscope tune -n 4 --coll allreduce,bcast -o tuned
  mpiscope tune -n 2,4 --coll allreduce --sizes 8-64K:x8 -o tuned24
  mpiscope tune --cluster fe --mpi mpich --sizes 8-1M:x2 --weights app-weights.json
  mpiscope tune -n 2 --coll allreduce --sizes 8,64K --time-budget 0.1 --exhaustive
  mpiscope tune -n 8 --coll allreduce --from-run pingpong-run
  mpiscope tune -n 8 --coll allreduce --search adaptive\
""",
    )
    p.add_argument(
        "-n",
        "--np",
        metavar="N[,N…]",
        type=types.comm_sizes,
        help="ranks: the communicator sizes tuned, a comma list (default: CPUs here, or every slot of --cluster)",
    )
    add_mpi(p)
    p.add_argument("--ppn", type=types.count(1), help="ranks per node (with --hostfile)")
    p.add_argument("--hostfile", type=types.text_file, help="hosts and slots, as for mpiscope run")
    p.add_argument("--cluster", metavar="NAME", type=types.cluster_name, help="tune on the emulated cluster NAME")
    p.add_argument("--launcher-args", metavar="WORDS", type=types.word_list, help="more options for the launcher")
    p.add_argument(
        "--coll",
        default=",".join(_collectives()),
        type=_coll_list,
        help="comma list of collectives (default: all nine)",
    )
    p.add_argument(
        "--sizes",
        default=DEFAULT_SIZES,
        type=types.size_list,
        help=f"the size grid, as mpiscope run takes it (default {DEFAULT_SIZES})",
    )
    p.add_argument(
        "--exhaustive", action="store_true", help="measure every size with every algorithm (no adaptive search)"
    )
    p.add_argument(
        "--search",
        choices=("adaptive", "guided"),
        help="how the cells to measure are chosen: guided (the default: our simulator of "
        "each algorithm from the machine's point-to-point costs, from --from-run, --machine "
        "or a pingpong launch of its own, measuring where its winner is uncertain) or "
        "adaptive (bisection of the size grid); --exhaustive measures every cell",
    )
    p.add_argument(
        "--from-run",
        metavar="RUN",
        type=types.run_ref,
        help="guided search: a run with pingpong on the machine tuned, whose Hockney fit the "
        "simulator takes (default: a pingpong launch between ranks 0 and 1 of the tune's layout)",
    )
    add_out(p)
    p.add_argument(
        "--coarse",
        type=types.count(0),
        default=0,
        help="adaptive search: also every N-th size in its first refining pass "
        "(default 0: bisection from the grid's ends)",
    )
    p.add_argument(
        "--prune",
        default="10%",
        type=types.percent,
        help="adaptive search: an algorithm slower than one other beyond this at both "
        "ends of an interval is left out of it (10%%)",
    )
    p.add_argument(
        "--model-prune",
        default="25%",
        metavar="X|off",
        type=types.percent_or_off,
        help="adaptive search: an algorithm that cost models fitted to its measured "
        "sizes predict slower than another beyond X (plus both fits' residuals) "
        "is not measured at the next size (25%%; off: no model pruning)",
    )
    p.add_argument(
        "--skip", metavar="LIST", default="", type=types.word_list, help="algorithm names never forced (comma list)"
    )
    p.add_argument("--noise", default="2%", type=types.percent, help="practical threshold of compare's verdict (2%%)")
    p.add_argument("--alpha", type=types.level, default=0.05, help="significance level (0.05)")
    p.add_argument("--max-rules", type=types.count(1), default=8, help="message-size rules per collective at most (8)")
    p.add_argument(
        "--repeat",
        type=types.count(1, MAX_REPEAT),
        default=3,
        help="rounds of the measurement launches, interleaved; from 2 on, verdicts take the launch as the unit (3)",
    )
    p.add_argument(
        "--verify-repeat",
        type=types.count(1, MAX_REPEAT),
        default=3,
        help="default/tuned launch pairs of the verification; from 2 on, speedup intervals are over launches (3)",
    )
    p.add_argument(
        "--time-budget", type=types.seconds, default=0.3, help="seconds at most per collective × size × launch (0.3)"
    )
    p.add_argument(
        "--reps-max", type=types.count(1, types.MAX_REPS), default=2000, help="repetitions at most per series (2000)"
    )
    p.add_argument(
        "--ci-width",
        type=types.fraction,
        default=0.02,
        help="the engine's stopping rule: 95%% CI of the median within ±this (0.02)",
    )
    p.add_argument(
        "--weights",
        metavar="FILE",
        type=types.weights_file,
        help="an application's calls per collective and size: its expected time in collectives before and after",
    )
    p.add_argument(
        "--machine",
        metavar="FILE",
        type=types.machine_file,
        help="cost-model parameters (as mpiscope model takes them): predicted "
        "change-over points beside the measured ones",
    )
    p.add_argument(
        "--own",
        action="store_true",
        help="also measure our own algorithms (native/engine/colls/) and say where one beats "
        "every algorithm the library offers",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="DIR",
        type=types.output_dir,
        help="directory for the files, tune.json and the runs (default: tune-<library>-<version>-p<N>)",
    )
    add_seed(p, "seed of the bootstraps")
    add_json(p, "print the result as JSON")


def _collectives():
    from mpiscope.mpilibs.algorithm_catalog import COLLECTIVES

    return COLLECTIVES


@types._kind("text")
def _coll_list(text) -> str:
    """--coll: a comma list of the collectives mpiscope tunes, at least one."""
    names = [c.strip() for c in types.text(text).split(",") if c.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"{text!r} lists no collective; choose from {', '.join(_collectives())}")
    for c in names:
        if c not in _collectives():
            raise argparse.ArgumentTypeError(
                f"'{c}' is not a collective mpiscope tunes; choose from {', '.join(_collectives())}"
            )
    return text


def _plan(args, out: Path, installation, own=None, np=None):
    """The base run plan, as `mpiscope run` would make it from the same options,
    for the identified MPI `installation`; `own`: collectives to measure with
    every algorithm of our own (--algo all).
    Every repetition starts at a barrier (--sync barrier): --sync auto picks
    window starts per series and falls back to barriers within one when
    windows fail, and on an oversubscribed emulated cluster that split the
    series of one cell between two ways of timing, so that the same code
    timed under two names could differ; compared series must be timed alike. The barrier is the engine's
    own (--start-barrier own): a launch that forces a barrier algorithm
    would otherwise start every other collective's repetitions with it."""
    from mpiscope.measure.plan import make_plan
    from mpiscope.measure.request import LaunchRequest, MeasureRequest

    at = LaunchRequest(
        np=np,
        installation=installation,
        ppn=args.ppn,
        hostfile=args.hostfile,
        cluster=args.cluster,
        launcher_args=args.launcher_args,
    )
    return make_plan(
        MeasureRequest(
            launch=at,
            out=str(out),
            bench=",".join(own) if own else "allreduce",
            time_budget=args.time_budget,
            sync="barrier",
            start_barrier="own",
            reps_max=args.reps_max,
            ci_width=args.ci_width,
            seed=args.seed,
            algo="all" if own else None,
            sizes=args.sizes if own else None,
        )
    )


def _config(args):
    from mpiscope.common.sizes import parse_sizes
    from mpiscope.models.costmodels.params import load_machine
    from mpiscope.cli.analysis import parse_noise
    from mpiscope.tune.tuner import TuneConfig
    from mpiscope.tune.weights import read_weights

    colls = [c.strip() for c in args.coll.split(",") if c.strip()]  # checked: _coll_list
    weights, left_out = read_weights(args.weights, _collectives()) if args.weights else (None, [])
    if weights:
        unknown = [c for c in weights if c not in _collectives()]
        if unknown:
            raise UsageError(f"--weights: {', '.join(unknown)} is not a collective mpiscope tunes")
        colls = [c for c in colls if c in weights] or colls
    prune = parse_noise(args.prune)  # the texts are checked: types.percent
    model_prune = None if args.model_prune == "off" else parse_noise(args.model_prune)
    machine = load_machine(args.machine) if args.machine else None
    if machine is not None and machine.hockney_costs() is None:
        raise UsageError(
            f"--machine {args.machine} lacks alpha and beta (Hockney), which the "
            "predicted change-over points need; give a model with them"
        )
    sizes = sorted(set(parse_sizes(args.sizes)))
    return TuneConfig(
        collectives=colls,
        sizes=sizes,
        adaptive=not args.exhaustive,
        search=args.search or "guided",
        sim_costs=_sim_costs(args, machine),
        coarse=args.coarse,
        noise=parse_noise(args.noise),
        alpha=args.alpha,
        prune=prune,
        model_prune=model_prune,
        max_rules=args.max_rules,
        repeat=args.repeat,
        verify_repeat=args.verify_repeat,
        seed=args.seed,
        skip=tuple(s.strip() for s in args.skip.split(",") if s.strip()),
        weights=weights,
        weights_left_out=tuple(left_out),
        machine=machine,
    )


def _sim_costs(args, machine):
    """The guided search's costs, from --from-run's pingpong or --machine's
    model (sim/costs.py); None for the other searches, and where the tune
    measures them itself (tune/p2p_costs.py)."""
    from mpiscope.sim.costs import from_model_params
    from mpiscope.sim.measured import fitted_costs
    from mpiscope.store import catalog

    if args.exhaustive and args.search:
        raise UsageError(
            f"--search {args.search} chooses which cells to measure, --exhaustive measures them all: give one of them"
        )
    if args.exhaustive or args.search == "adaptive":
        if args.from_run:
            raise UsageError(
                "--from-run gives the guided search its costs: leave out --search adaptive and --exhaustive"
            )
        return None
    if args.from_run and machine is not None:
        raise UsageError("give --from-run RUN or --machine FILE for the guided search's costs, not both")
    if args.from_run:
        return fitted_costs(catalog.resolve(args.out, args.from_run))
    if machine is not None:
        return from_model_params(machine, f"--machine {args.machine}")
    return None


def _check_skip(skip, catalog, collectives) -> None:
    """--skip: names the library offers for the collectives tuned (known only
    once the library was asked), so that a typing error is not a whole tune
    that forces the algorithm it meant to leave out."""
    known = sorted({name for c in collectives for name in catalog.names(c)})
    unknown = [name for name in skip if name not in known]
    if unknown:
        raise UsageError(
            f"--skip: {unknown[0]!r} is no algorithm or preset {catalog.library} {catalog.version} "
            f"offers for {', '.join(collectives)}; valid names: {', '.join(known) or 'none'}"
        )


def _check_output(out: Path) -> Path:
    """-o: a new or empty directory, or one an earlier tune wrote."""
    if out.exists() and (not out.is_dir() or (any(out.iterdir()) and not (out / "tune.json").exists())):
        raise UsageError(
            f"-o {out}: it exists and holds other things; give a new or empty "
            f"directory (or one an earlier mpiscope tune wrote)"
        )
    return out


def cmd_tune(args):
    from mpiscope.engine.mpi import find_mpi
    from mpiscope.tune.discover import discover
    from mpiscope.tune.result_file import save
    from mpiscope.tune.tuner import Tuning
    from mpiscope.common.documents import json_document
    from mpiscope.views.tune import format_tune

    # Checked before anything is launched or written: bad options leave nothing behind.
    cfg = _config(args)
    if args.output:
        _check_output(Path(args.output))
    mpi = find_mpi(mpicc=args.mpicc, mpi=args.mpi)
    catalog = discover(mpi)
    _check_skip(cfg.skip, catalog, cfg.collectives)
    plans = [_plan(args, Path("runs"), mpi, np=n) for n in args.np or [None]]
    ps = "_".join(str(pl.np) for pl in plans)
    out = _check_output(Path(args.output or f"tune-{catalog.library}-{catalog.version}-p{ps}"))
    plans = [dataclasses.replace(pl, out=out / "runs") for pl in plans]
    own_plans = None
    if args.own:
        from mpiscope.engine.describe import describe

        with_own = [c for c in cfg.collectives if c in describe(mpi).algorithms]
        own_plans = [_plan(args, out / "runs", mpi, with_own, pl.np) if with_own else None for pl in plans]
    out.mkdir(parents=True, exist_ok=True)

    def say(text):
        print(f"mpiscope tune: {text}", file=sys.stderr, flush=True)

    say(
        f"{mpi.name}: {len(cfg.collectives)} collectives on {', '.join(str(pl.np) for pl in plans)}"
        f" ranks, algorithms read from {catalog.source}"
    )
    result = Tuning(plans, catalog, cfg, out, say, own_plans, mpi).run()
    save(result, out)
    from mpiscope.cli.report import write_tune_report

    write_tune_report([out], out / "report.html")
    if args.json:
        print(json_document("tune", result))
    else:
        print(format_tune(result))
    v = result["verification"]
    if v["file_in_effect"] is False and v["checked_by"] == "gdb":
        sys.stderr.write(
            "mpiscope tune: the library does not enter the algorithm functions the "
            "file names: it did not use the file\n"
        )
        return 1
    if v["file_in_effect"] is False:
        sys.stderr.write(
            "mpiscope tune: warning: most tuned cells run at the default's time, not "
            "at their algorithm's: the library may not use the file\n"
        )
    return 0
