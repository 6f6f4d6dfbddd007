# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope sim schedule|run|predict|check|whatif`: schedules of our own
collective algorithms and their simulation, with costs from a machine model,
from options, or from a run's measurements (sim/); an application's traced
pattern at more ranks (app/scale.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.common.sizes import format_size, parse_size_option
from mpiscope.models.costmodels import ALGORITHMS, COLLECTIVES
from mpiscope.models.costmodels.params import parse_per_byte, parse_time
from mpiscope.profile import files as profile_files
from mpiscope.store import catalog
from mpiscope.cli import types
from mpiscope.cli.options import add_json, add_out, add_run, add_seed
from mpiscope.cli.commands import command_parser

MAX_REPLICATES = 10_000  # Monte Carlo replicates at most: each is a whole simulation
_TIMES = ("alpha", "alpha_s", "alpha_r", "L", "o", "g")
_PER_BYTE = ("beta", "beta_s", "beta_r", "gamma", "G", "O")


def _bench(name):
    if name not in COLLECTIVES:
        raise UsageError(f"--bench {name}: choose from {', '.join(COLLECTIVES)}")
    return name


def _costs(args):
    """SimCosts from --machine or --from-run, then the cost options over them."""
    from mpiscope.sim.costs import SimCosts, load_costs, override
    from mpiscope.sim.measured import fitted_costs, shaped_link_costs

    if args.machine and args.from_run:
        raise UsageError("give --machine FILE or --from-run RUN, not both")
    if args.shaped_link and not args.from_run:
        raise UsageError("--shaped-link fits a run's pingpong: give --from-run RUN")
    if args.shaped_link and (args.sample or args.fair):
        raise UsageError("--shaped-link decides each message's time on the wire: not with --sample or --fair")
    given = {k: getattr(args, k) for k in _TIMES + _PER_BYTE if getattr(args, k) is not None}
    if args.machine:
        base = load_costs(args.machine)
    elif args.from_run and args.shaped_link:
        base = shaped_link_costs(catalog.resolve(args.out, args.from_run), args.p2p)
    elif args.from_run:
        base = fitted_costs(catalog.resolve(args.out, args.from_run), args.p2p)
    elif given:
        base = SimCosts()
    else:
        raise UsageError(
            "give the costs: --machine FILE, --from-run RUN, or options such as "
            "--alpha 2us --beta 1ns/B (Hockney) or --L, --o, --g, --G (LogGP)"
        )
    v = {k: parse_time(t, f"--{k.replace('_', '-')}") for k, t in given.items() if k in _TIMES}
    v.update({k: parse_per_byte(t, f"--{k.replace('_', '-')}") for k, t in given.items() if k in _PER_BYTE})
    if "alpha" in v or "beta" in v:  # Hockney: the whole message on the sender's channel (costs.py)
        v["alpha_s"], v["beta_s"] = v.pop("alpha", base.alpha_s), v.pop("beta", base.beta_s)
    if "o" in v:
        v["o_s"] = v["o_r"] = v.pop("o")
    if args.eager is not None:
        v["S"] = float(parse_size_option("--eager", args.eager))
    if args.rendezvous_first is not None:
        if args.fair:
            raise UsageError("--rendezvous-first needs channels that send one message after the other: not with --fair")
        v["S_first"] = float(parse_size_option("--rendezvous-first", args.rendezvous_first))
    if args.burst is not None:
        if args.fair:
            raise UsageError("--burst needs channels that send one message after the other: not with --fair")
        v["burst"] = float(parse_size_option("--burst", args.burst))
    if args.segment is not None:
        v["segment"] = parse_size_option("--segment", args.segment, minimum=1)
    return override(base, **v)


def _extras(args, p=None):
    from mpiscope.sim.measured import arrival_skew, p2p_quantiles, with_exchange
    from mpiscope.sim.simulate import Extras, Topology

    if args.replicates < 1:
        raise UsageError(f"--replicates must be at least 1, got {args.replicates}")
    ex = Extras(replicates=args.replicates, seed=args.seed, fair=args.fair)
    if args.sample:
        if not args.from_run:
            raise UsageError("--sample draws message times from a run: give --from-run RUN")
        ex.dist = p2p_quantiles(catalog.resolve(args.out, args.from_run), args.p2p)
    if getattr(args, "exchange_from_ring", False):
        if not (args.from_run and args.p2p == "pingpong"):
            raise UsageError(
                "--exchange-from-ring shifts pingpong's exchanges by --from-run's ring: "
                "give --from-run RUN, --p2p pingpong"
            )
        with_exchange(ex, catalog.resolve(args.out, args.from_run))
    if getattr(args, "skew_from_run", False):
        if not args.from_run:
            raise UsageError("--skew-from-run takes the arrival skew of --from-run RUN: give it")
        ex.skew = arrival_skew(catalog.resolve(args.out, args.from_run))
    if getattr(args, "uplink", None) is not None:
        if not args.hosts_per_switch:
            raise UsageError("--uplink needs --hosts-per-switch (and --ranks-per-host, 1 by default)")
        ex.topology = Topology(args.ranks_per_host, args.hosts_per_switch, parse_per_byte(args.uplink, "--uplink"))
    return ex


# ------------------------------------------------------------------ schedule


def _schedule_from_trace(args, out: Path):
    from mpiscope.sim.from_trace import goal_from_events, write_goal
    from mpiscope.views.timechart import load_chart

    if args.format == "bin":
        raise UsageError("--from-trace writes GOAL text (--format goal)")
    run_dir = catalog.resolve(args.out, args.from_trace)
    if (run_dir / profile_files.RAW_DIR).is_dir():
        return _schedule_from_profile(run_dir, out)
    for flag, value in (("--bench", args.bench), ("--algo", args.algo), ("--size", args.size)):
        if value is None:
            raise UsageError(f"{flag} is required (run {run_dir.name} is a benchmark run)")
    _bench(args.bench)
    size = parse_size_option("--size", args.size)
    chart = load_chart(run_dir, args.bench, args.algo, size, rep=args.rep)
    write_goal(goal_from_events(chart.events, max(chart.ranks) + 1), out)
    print(
        f"wrote {out} (goal): repetition {chart.rep} of {args.bench}/{args.algo} at {format_size(size)} B "
        f"traced in run {run_dir.name}, gaps between operations as calc"
    )
    return 0


def _schedule_from_profile(run_dir: Path, out: Path):
    from mpiscope.profile import summary
    from mpiscope.profile.sim_events import profile_events
    from mpiscope.sim.from_trace import goal_from_events, write_goal

    events, nranks = profile_events(summary.load(run_dir))
    if events.num_rows == 0:
        raise UsageError(
            f"profile run {run_dir.name} traced no point-to-point call: a schedule of its "
            "sends and receives would be empty (its collectives: `mpiscope show RUN`)"
        )
    write_goal(goal_from_events(events, nranks), out)
    print(
        f"wrote {out} (goal): the point-to-point operations of profile run {run_dir.name} "
        f"({events.num_rows} sends and receives on {nranks} ranks), gaps between them (collectives "
        f"included) as calc"
    )
    return 0


def cmd_schedule(args) -> int:
    from mpiscope.common.atomic import atomic_path
    from mpiscope.sim import binary

    out = Path(args.output)
    if out.exists() and not args.force:
        raise UsageError(f"{out} exists; remove it or give --force")
    if args.from_trace:
        return _schedule_from_trace(args, out)
    for flag, value in (("--bench", args.bench), ("--algo", args.algo), ("--size", args.size)):
        if value is None:
            raise UsageError(f"{flag} is required")
    _bench(args.bench)
    if args.np is None:
        raise UsageError("give -p/--np N (or --from-trace RUN)")
    size = parse_size_option("--size", args.size)
    fmt = args.format or ("bin" if str(args.output).endswith(".bin") else "goal")
    gamma = parse_per_byte(args.gamma, "--gamma") if args.gamma is not None else 0.0
    argv = [
        "--bench",
        args.bench,
        "--algo",
        args.algo,
        "-p",
        args.np,
        "--size",
        size,
        "--format",
        fmt,
        "--gamma",
        repr(gamma),
    ]
    if args.segment is not None:
        argv += ["--segment", parse_size_option("--segment", args.segment, minimum=1)]
    # The generator names a bad algorithm before any file is made.
    binary.probe(["--bench", args.bench, "--algo", args.algo, "-p", args.np, "--size", size])
    with atomic_path(out) as tmp:
        binary.schedule(argv + ["-o", tmp])
    print(f"wrote {out} ({fmt}): {args.bench}/{args.algo} on {args.np} ranks at {format_size(size)} B")
    return 0


# ----------------------------------------------------------------------- run


def _chart(trace_csv, title_bits, path):
    import pyarrow.csv as pcsv

    from mpiscope.report.sim_data import chart_of
    from mpiscope.report.timechart import write_chart

    return write_chart(chart_of(pcsv.read_csv(trace_csv), *title_bits), path)


def cmd_run(args) -> int:
    import tempfile

    from mpiscope.sim.simulate import answer, run_argv
    from mpiscope.views.sim import format_run, run_document, run_json

    costs, extras = _costs(args), _extras(args)
    sched = Path(args.schedule)
    if not sched.is_file():
        raise UsageError(f"schedule {sched} does not exist (write one with mpiscope sim schedule)")
    more = []
    if args.critical_path:
        more += ["--critical-path", args.critical_path]
    with tempfile.TemporaryDirectory(prefix="mpiscope-sim-") as tmp:
        trace = Path(tmp) / "trace.csv"
        if args.chart:
            more += ["--trace", trace]
        doc = run_argv(["--schedule", sched], costs, extras, more)
        if args.chart:
            _chart(trace, ("schedule", sched.name, 0), args.chart)
    out = run_document(sched, costs, answer(doc), doc)
    sys.stdout.write(run_json(out) if args.json else format_run(out, args.chart))
    return 0


# ------------------------------------------------------------------- predict


def cmd_predict(args) -> int:
    from mpiscope.sim.predict import crossovers, rank
    from mpiscope.views.sim import SimPrediction, format_predict, predict_json

    bench = _bench(args.bench)
    if args.np < 1:
        raise UsageError(f"-p/--np must be at least 1, got {args.np}")
    algos = ALGORITHMS[bench] if args.algo in (None, "all") else tuple(args.algo.split(","))
    for a in algos:
        if a not in ALGORITHMS[bench]:
            raise UsageError(f"--algo {a}: {bench} has {', '.join(ALGORITHMS[bench])}")
    if args.size is None and not args.crossover:
        raise UsageError("give --size SIZE (or --crossover for the sizes where the best changes)")
    costs, extras = _costs(args), _extras(args)
    found = SimPrediction(bench, args.np, costs, extras.replicates)
    if args.size is not None:
        found.size = parse_size_option("--size", args.size)
        found.ranked = rank(bench, algos, args.np, found.size, costs, extras)
    if args.crossover:
        low, sep, high = str(args.range).partition("-")
        if not sep:
            raise UsageError(f"--range '{args.range}': write LO-HI, e.g. 1-1M")
        lo, hi = parse_size_option("--range", low), parse_size_option("--range", high)
        if hi <= lo:
            raise UsageError(f"--range '{args.range}' must go from a smaller to a larger size")
        found.span = (lo, hi)
        found.crossovers = crossovers(bench, algos, args.np, costs, extras, lo, hi)
        found.best_at_start = rank(bench, algos, args.np, lo, costs, extras)[0].algo
    sys.stdout.write(predict_json(found) if args.json else format_predict(found))
    return 0


# --------------------------------------------------------------------- check


def cmd_check(args) -> int:
    from mpiscope.sim.check import check_run
    from mpiscope.views.sim import check_json, format_check

    run_dir = catalog.resolve(args.out, args.run)
    if args.bench is not None:
        _bench(args.bench)
    if not args.machine and not args.from_run:
        args.from_run = args.run  # the run's own point-to-point data
    skew, args.skew_from_run = args.skew_from_run, False
    ex = _extras(args)
    if skew:  # the lateness of RUN's own collectives, whatever run the costs come from
        from mpiscope.sim.measured import arrival_skew

        ex.skew = arrival_skew(run_dir)
    res = check_run(run_dir, _costs(args), ex, args.bench)
    sys.stdout.write(check_json(res) if args.json else format_check(res))
    return 0


# -------------------------------------------------------------------- whatif


def cmd_whatif(args) -> int:
    from mpiscope.app.scale import whatif
    from mpiscope.views.sim import format_whatif, whatif_json

    ps = args.np  # distinct rank counts, sorted (types.rank_counts)
    run_dir = catalog.resolve(args.out, args.from_trace)
    costs, extras = _costs(args), _extras(args)
    w = whatif(run_dir, args.tune, ps, costs, extras)
    sys.stdout.write(whatif_json(w) if args.json else format_whatif(w))
    return 0


# -------------------------------------------------------------------- parser


def _cost_options(p, from_run=True):
    g = p.add_argument_group("costs")
    g.add_argument(
        "--machine",
        metavar="FILE",
        type=types.machine_file,
        help="a machine model: LogGP from `mpiscope loggp --save`, or JSON with alpha, beta, "
        "alpha_s, … as for `mpiscope model`",
    )
    if from_run:
        g.add_argument(
            "--from-run",
            metavar="RUN",
            type=types.run_ref,
            help="the Hockney fit of this run's pingpong (measure it in the run), or with --shaped-link a "
            "shaped link fitted to it",
        )
    g.add_argument(
        "--p2p",
        choices=("pingpong", "ring"),
        default="pingpong",
        help="the run's point-to-point benchmark the costs come from (default: %(default)s)",
    )
    g.add_argument(
        "--shaped-link",
        action="store_true",
        help="--from-run's pingpong as a link shaped by a token bucket: its rate and burst from the "
        "line through the larger half of its sizes (robust to stalls), the latency from --p2p's smallest size",
    )
    g.add_argument(
        "--exchange-from-ring",
        action="store_true",
        help="a message whose sender receives from the same peer at once (an exchange) costs --from-run's ring "
        "time less its pingpong's more (each size's floor: its 10th percentile); by default every message is "
        "charged as pingpong's lone one",
    )
    g.add_argument(
        "--sample",
        action="store_true",
        help="draw every message's time from the run's --p2p distributions (per size, interpolated between sizes)",
    )
    time, per_byte = types.time_cost, types.per_byte_cost
    g.add_argument("--alpha", type=time, help="Hockney latency per message, e.g. 2us")
    g.add_argument("--beta", type=per_byte, help="Hockney cost per byte, e.g. 1ns/B or 1GB/s")
    g.add_argument("--alpha-s", type=time, help="sender's cost per message (Tan and Strazdins 2002)")
    g.add_argument("--beta-s", type=per_byte, help="sender's cost per byte")
    g.add_argument("--alpha-r", type=time, help="receiver's cost per message")
    g.add_argument("--beta-r", type=per_byte, help="receiver's cost per byte")
    g.add_argument("--L", dest="L", type=time, help="LogGP: wire latency")
    g.add_argument("--o", dest="o", type=time, help="LogGP: CPU overhead of a send and of a receive")
    g.add_argument("--g", dest="g", type=time, help="LogGP: gap between messages")
    g.add_argument("--G", dest="G", type=per_byte, help="LogGP: gap per byte (a time per byte or a bandwidth)")
    g.add_argument("--O", dest="O", type=per_byte, help="LogGOPS: CPU overhead per byte")
    g.add_argument(
        "--eager",
        metavar="SIZE",
        type=types.size,
        help="LogGOPS S: larger messages go by rendezvous (default: all eager)",
    )
    g.add_argument(
        "--rendezvous-first",
        metavar="SIZE",
        type=types.size,
        help="bytes a rendezvous message sends with its request, the rest after the receiver's "
        "answer, behind what its channel took meanwhile (default 0: a bare request, as Open MPI's ob1 "
        "sends over TCP)",
    )
    g.add_argument(
        "--burst",
        metavar="SIZE",
        type=types.size,
        help="a link's token bucket (needs G): an idle link passes this many bytes at once, a busy "
        "one only its rate, as a traffic shaper does (default: none)",
    )
    g.add_argument("--gamma", type=per_byte, help="reduction cost per byte (default 0)")
    g.add_argument(
        "--segment", metavar="SIZE", type=types.positive_size, help="segment of pipelined_chain (default 8K)"
    )
    g.add_argument(
        "--fair",
        action="store_true",
        help="a rank's messages in flight share its send channel equally, as TCP streams do "
        "(default: one after the other)",
    )
    g.add_argument(
        "--replicates",
        type=types.count(1, MAX_REPLICATES),
        default=1,
        help=f"Monte Carlo replicates, at most {MAX_REPLICATES} (default: %(default)s)",
    )
    add_seed(g, "seed of the first replicate; replicate k uses seed + k")


def add_sim_command(subparsers) -> None:
    fmt = argparse.RawDescriptionHelpFormatter
    sim = command_parser(
        subparsers,
        "sim",
        description="""\
Our own collective algorithms (native/engine/colls) run unchanged against a
recording backend and become schedules (GOAL text, as LogGOPSim reads, or
a compact binary form); a discrete-event simulator runs them under LogGOPS
and sender/receiver costs from a machine model, options or a run.""",
    )
    sub = sim.add_subparsers(dest="sim_command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser(
        "schedule",
        help="write the schedule of one of our algorithms (GOAL text or binary)",
        formatter_class=fmt,
        epilog="examples:\n"
        "  mpiscope sim schedule --bench allreduce --algo ring -p 1024 --size 64K "
        "-o ring.goal\n"
        "  mpiscope sim schedule --bench bcast --algo binomial -p 1048576 --size 8 "
        "-o bcast.bin\n"
        "  mpiscope sim schedule --from-trace latest --bench allgather --algo ring "
        "--size 1K -o traced.goal",
    )
    p.add_argument(
        "--bench",
        type=types.text,
        help=f"the collective: {', '.join(COLLECTIVES)} (required unless --from-trace names a profile run)",
    )
    p.add_argument("--algo", type=types.text, help="one of its algorithms (required like --bench)")
    p.add_argument(
        "-p", "--np", type=types.count(1, types.MAX_RANKS), help="number of ranks (required unless --from-trace)"
    )
    p.add_argument("--size", type=types.size, help="the benchmark's size (units B/K/M/G; required like --bench)")
    p.add_argument(
        "--segment", metavar="SIZE", type=types.positive_size, help="segment of pipelined_chain (default 8K)"
    )
    p.add_argument(
        "--from-trace",
        metavar="RUN",
        type=types.run_ref,
        help="the schedule of a traced repetition of RUN (mpiscope run --trace), or of a traced "
        "profile run (mpiscope profile --trace): its operations as measured, the gaps "
        "between them as calc",
    )
    p.add_argument(
        "--rep", type=types.count(0), help="with --from-trace: the repetition (default: the one with the median time)"
    )
    p.add_argument(
        "--format", choices=("goal", "bin"), help="GOAL text or binary (default: bin for a .bin file, else goal)"
    )
    p.add_argument(
        "--gamma", type=types.per_byte_cost, help="reduction cost per byte, written into GOAL's calc (default 0)"
    )
    p.add_argument("-o", "--output", required=True, metavar="FILE", type=types.output_file, help="the schedule file")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    add_out(p)
    p.set_defaults(func=cmd_schedule)

    p = sub.add_parser(
        "run",
        help="simulate a schedule: finish times, critical path, time chart",
        formatter_class=fmt,
        epilog="examples:\n"
        "  mpiscope sim run ring.goal --alpha 2us --beta 1GB/s\n"
        "  mpiscope sim run ring.goal --machine model.json --chart ring.svg\n"
        "  mpiscope sim run ring.goal --from-run latest --sample --replicates 20",
    )
    p.add_argument("schedule", metavar="SCHEDULE", type=types.input_file, help="a schedule file (GOAL text or binary)")
    _cost_options(p)
    p.add_argument(
        "--skew-from-run", action="store_true", help="draw each rank's start from --from-run's measured arrival skew"
    )
    p.add_argument("--ranks-per-host", type=types.count(1), default=1, help="ranks per host (default: %(default)s)")
    p.add_argument("--hosts-per-switch", type=types.count(1), help="hosts per switch; switches share their uplinks")
    p.add_argument(
        "--uplink", type=types.per_byte_cost, help="a switch uplink's bandwidth (or time per byte), e.g. 12.5MB/s"
    )
    p.add_argument(
        "--critical-path",
        type=types.count(0),
        metavar="N",
        default=0,
        help="list the last N operations of the critical path",
    )
    p.add_argument(
        "--chart", metavar="FILE", type=types.output_file, help="also draw the time chart of replicate 0 (SVG)"
    )
    add_json(p, "print JSON (seconds)")
    add_out(p)
    p.set_defaults(func=cmd_run)

    p = sub.add_parser(
        "predict",
        help="rank the algorithms of a collective by simulation, at any scale",
        formatter_class=fmt,
        epilog="examples:\n"
        "  mpiscope sim predict --bench allreduce -p 4096 --size 64K --alpha 2us "
        "--beta 1GB/s\n"
        "  mpiscope sim predict --bench bcast -p 64 --crossover --from-run latest "
        "--sample --replicates 20",
    )
    p.add_argument("--bench", required=True, type=types.text, help=f"the collective: {', '.join(COLLECTIVES)}")
    p.add_argument("--algo", type=types.text, help="algorithms, comma separated, or all (default)")
    p.add_argument("-p", "--np", type=types.count(1, types.MAX_RANKS), required=True, help="number of ranks")
    p.add_argument("--size", type=types.size, help="the size (units B/K/M/G); required unless --crossover")
    p.add_argument("--crossover", action="store_true", help="also list the sizes where the best changes")
    p.add_argument(
        "--range", default="1-1M", type=types.size_range, help="sizes --crossover searches (default %(default)s)"
    )
    _cost_options(p)
    add_json(p, "print JSON (seconds)")
    add_out(p)
    p.set_defaults(func=cmd_predict, skew_from_run=False, uplink=None)

    p = sub.add_parser(
        "check",
        help="simulated against measured, per algorithm and size of a run",
        formatter_class=fmt,
        epilog="examples:\n"
        "  mpiscope run -n 4 --bench pingpong,allgather --algo all --sizes 8-64K:x8\n"
        "  mpiscope sim check latest --sample --replicates 20",
    )
    add_run(p)
    p.add_argument("--bench", type=types.text, help="check only this collective")
    _cost_options(p)
    p.add_argument(
        "--skew-from-run",
        action="store_true",
        help="draw each rank's start from RUN's measured lateness (start after the agreed start)",
    )
    add_json(p, "print JSON (seconds)")
    add_out(p)
    p.set_defaults(func=cmd_check, uplink=None)

    p = sub.add_parser(
        "whatif",
        help="an application's traced run at more ranks: its time in communication "
        "under the default and the tuned selection",
        formatter_class=fmt,
        description="""\
Replicates the per-rank pattern of a traced profile run (mpiscope profile
--trace) to more ranks: each rank follows the traced rank of its rank modulo
the traced count, keeps its point-to-point partners at the same distance in
rank order and its computations as traced; a collective the traced run called
on all its ranks runs on all of them, one on fewer on as many. Each runs as
our own algorithm of the structure the library's default picks, and the
tune's rules pick; the simulator gives the time in communication per rank
under each. The traced run's own rank count is simulated too, against what
the trace measured.""",
        epilog="examples:\n"
        "  mpiscope profile --trace -- mpirun -n 2 lmp -in in.lj\n"
        "  mpiscope sim whatif --from-trace latest --tune tuned -p 64,256 --from-run pp "
        "--sample --replicates 10",
    )
    p.add_argument(
        "--from-trace",
        metavar="RUN",
        required=True,
        type=types.run_ref,
        help="a traced profile run of the application (mpiscope profile --trace)",
    )
    p.add_argument(
        "--tune", metavar="DIR", required=True, type=types.tune_dir, help="the output directory of `mpiscope tune`"
    )
    p.add_argument(
        "-p",
        "--np",
        metavar="P,…",
        required=True,
        type=types.rank_counts,
        help="rank counts to answer for, comma separated (multiples of the traced run's)",
    )
    _cost_options(p)
    add_json(p, "print JSON (seconds)")
    add_out(p)
    p.set_defaults(func=cmd_whatif, skew_from_run=False, uplink=None)
