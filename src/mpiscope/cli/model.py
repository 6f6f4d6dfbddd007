# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope model predict` and `mpiscope model check`: the cost models of
our own collective algorithms (costmodels/), against each other and against
a run's measurements."""

from __future__ import annotations

import argparse
import sys

from mpiscope.store import catalog
from mpiscope.models.costmodels import COLLECTIVES
from mpiscope.models.costmodels.check import check_run
from mpiscope.models.costmodels.params import ModelParams, from_values, load_machine
from mpiscope.models.costmodels.predict import crossovers, predict
from mpiscope.common.errors import UsageError
from mpiscope.common.sizes import parse_size_option
from mpiscope.views.model import ModelPrediction, check_json, format_check, format_predict, predict_json
from mpiscope.cli import types
from mpiscope.cli.options import add_json, add_out, add_run
from mpiscope.cli.commands import command_parser


def _bench(name):
    if name not in COLLECTIVES:
        raise UsageError(f"--bench {name}: no cost models; choose from {', '.join(COLLECTIVES)}")
    return name


def _cli_params(args) -> ModelParams:
    values = {
        k: getattr(args, k)
        for k in ("alpha", "beta", "gamma", "alpha_s", "beta_s", "alpha_r", "beta_r")
        if getattr(args, k) is not None
    }
    segment = parse_size_option("--segment", args.segment) if args.segment is not None else None
    cli = from_values(values, "options", segment)
    if args.machine:
        machine = load_machine(args.machine)
        cli = ModelParams(
            **{
                k: getattr(cli, k) if k in values else getattr(machine, k)
                for k in ("alpha", "beta", "gamma", "alpha_s", "beta_s", "alpha_r", "beta_r")
            },
            segment=segment or machine.segment,
        )
    if cli.hockney_costs() is None:
        given = f"--machine {args.machine} lacks them: " if args.machine else ""
        raise UsageError(
            f"{given}give --alpha and --beta (Hockney), or --alpha-s, --beta-s, "
            "--alpha-r and --beta-r (sender/receiver), or --machine FILE"
        )
    return cli


def _range(text):
    lo, sep, hi = str(text).partition("-")
    if not sep:
        raise UsageError(f"--range '{text}': write LO-HI, e.g. 1-1G")
    lo, hi = parse_size_option("--range", lo), parse_size_option("--range", hi)
    if hi <= lo:
        raise UsageError(f"--range '{text}' must go from a smaller to a larger size")
    return lo, hi


def cmd_predict(args) -> int:
    bench = _bench(args.bench)
    if args.np < 1:
        raise UsageError(f"-p/--np must be at least 1, got {args.np}")
    if args.size is None and not args.crossover:
        raise UsageError("give --size SIZE (or --crossover for the sizes where the best changes)")
    params = _cli_params(args)
    hock, sr = params.hockney_costs(), params.sr_costs()
    by = args.rank_by or ("sr" if sr else "hockney")
    if by == "sr" and sr is None:
        raise UsageError("--rank-by sr needs --alpha-s, --beta-s, --alpha-r and --beta-r")
    found = ModelPrediction(bench, args.np, params, by)
    if args.size is not None:
        found.size = parse_size_option("--size", args.size)
        found.ranked = predict(bench, found.size, args.np, hock, sr, by)
    if args.crossover:
        lo, hi = _range(args.range)
        found.span = (lo, hi)
        found.crossovers = crossovers(bench, args.np, sr if by == "sr" else hock, lo, hi)
        found.best_at_start = predict(bench, lo, args.np, hock, sr, by)[0].name
    sys.stdout.write(predict_json(found) if args.json else format_predict(found))
    return 0


def cmd_check(args) -> int:
    run_dir = catalog.resolve(args.out, args.run)
    machine = load_machine(args.machine) if args.machine else None
    gamma = None
    if args.gamma is not None:
        gamma = from_values({"gamma": args.gamma}, "options").gamma
    segment = parse_size_option("--segment", args.segment) if args.segment is not None else None
    if args.bench is not None:
        _bench(args.bench)
    result = check_run(run_dir, machine, gamma, segment, args.bench)
    sys.stdout.write(check_json(result) if args.json else format_check(result))
    return 0


def _model_options(p, machine_help):
    p.add_argument("--machine", metavar="FILE", type=types.machine_file, help=machine_help)
    p.add_argument("--gamma", type=types.per_byte_cost, help="reduction cost per byte, e.g. 0.2ns/B (default 0)")
    p.add_argument(
        "--segment", type=types.positive_size, help="segment size of the pipelined chain broadcast (default 8K)"
    )
    add_json(p, "print JSON (seconds, seconds per byte)")


def add_model_command(subparsers) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    model = command_parser(
        subparsers,
        "model",
        description="""\
Cost models of mpiscope's collective algorithms (mpiscope run --algo):
  Hockney          every message costs α + β·m (+ γ per byte reduced)
  sender/receiver  a message costs its sender αs + βs·m and its receiver
                   αr + βr·m, so fan-in and fan-out patterns overlap
                   (Tan and Strazdins 2002); Hockney is the case αs = βs = 0.\
""",
    )
    sub = model.add_subparsers(dest="model_command", metavar="COMMAND")  # model's own parser class
    sub.required = True

    p = sub.add_parser(
        "predict",
        help="predicted time of every algorithm of a collective, ranked",
        formatter_class=fmt,
        description="Predicted time of every algorithm of one collective at one size, best\n"
        "first; --crossover lists the sizes where the best algorithm changes.\n"
        "Sizes mean what they mean for `mpiscope run` (bytes per rank, per block\n"
        "for allgather, alltoall and reduce_scatter_block).",
        epilog="examples:\n"
        "  mpiscope model predict --alpha 50us --beta 0.01us/B -p 8 --bench allreduce --size 64K\n"
        "  mpiscope model predict --alpha 2us --beta 10GB/s -p 16 --bench bcast --crossover\n"
        "  mpiscope model predict --alpha-s 24us --beta-s 0.08us/B --alpha-r 180us "
        "--beta-r 1.06us/B -p 8 --bench allgather --size 8K",
    )
    p.add_argument("--bench", required=True, type=types.text, help=f"the collective: {', '.join(COLLECTIVES)}")
    p.add_argument("-p", "--np", type=types.count(1, types.MAX_RANKS), required=True, help="number of ranks")
    p.add_argument("--size", type=types.size, help="message size (bytes; units B/K/M/G)")
    p.add_argument("--alpha", type=types.time_cost, help="Hockney latency per message, e.g. 50us")
    p.add_argument("--beta", type=types.per_byte_cost, help="Hockney cost per byte, e.g. 0.01us/B or 10GB/s")
    p.add_argument("--alpha-s", type=types.time_cost, help="sender's cost per message")
    p.add_argument("--beta-s", type=types.per_byte_cost, help="sender's cost per byte")
    p.add_argument("--alpha-r", type=types.time_cost, help="receiver's cost per message")
    p.add_argument("--beta-r", type=types.per_byte_cost, help="receiver's cost per byte")
    p.add_argument(
        "--rank-by", choices=("hockney", "sr"), help="model that ranks (default: sr when its four costs are given)"
    )
    p.add_argument("--crossover", action="store_true", help="also list the sizes at which the best algorithm changes")
    p.add_argument(
        "--range", default="1-1G", type=types.size_range, help="sizes searched by --crossover (default 1-1G)"
    )
    _model_options(
        p,
        "JSON file with alpha, beta, gamma, alpha_s, … (options given override it), "
        "or a LogGP model from `mpiscope loggp --save`",
    )
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser(
        "check",
        help="predicted against measured time per algorithm and size of a run",
        formatter_class=fmt,
        description="For every algorithm and size of our own collectives measured in RUN:\n"
        "the measured median, the predicted time and the relative error. α and β\n"
        "come from the Hockney fit of the run's pingpong (measure it in the same\n"
        "run) unless --machine FILE gives them; the sender/receiver model needs\n"
        "alpha_s, beta_s, alpha_r and beta_r from such a file.",
        epilog="examples:\n"
        "  mpiscope run -n 4 --bench pingpong,allgather --algo all --sizes 8-64K:x8\n"
        "  mpiscope model check latest\n"
        "  mpiscope model check latest --machine machine.json --json",
    )
    add_run(p)
    p.add_argument("--bench", type=types.text, help="check only this collective")
    _model_options(
        p,
        "JSON file with alpha, beta, gamma, alpha_s, beta_s, alpha_r, beta_r, or a "
        "LogGP model from `mpiscope loggp --save`",
    )
    add_out(p)
    p.set_defaults(func=cmd_check)
