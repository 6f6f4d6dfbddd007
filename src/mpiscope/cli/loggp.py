# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope loggp RUN` and `mpiscope layers RUN`: where the time of a message goes."""

from __future__ import annotations

import sys

from mpiscope.store import catalog
from mpiscope.common.errors import UsageError
from mpiscope.cli import types
from mpiscope.cli.options import add_bootstrap, add_json, add_out, add_run, check_bootstrap
from mpiscope.cli.commands import command_parser


def _common(p):
    add_run(p)
    add_bootstrap(p)
    add_json(p, "print JSON (base units: s, s/B, B, B/s)")
    add_out(p)


def cmd_loggp(args) -> int:
    from mpiscope.models.loggp import loggp_run
    from mpiscope.stats.quality import MIN_SAMPLES
    from mpiscope.views.loggp import format_loggp, loggp_json

    check_bootstrap(args)
    run_dir = catalog.resolve(args.out, args.run)
    result = loggp_run(run_dir, seed=args.seed, n_boot=args.resamples)
    if args.save:
        from mpiscope.models import machine_model

        few = result.insufficient()
        if few:
            what = "; ".join(
                f"{name} rests on {n} valid sample{'s' if n != 1 else ''} ({result.sources[name]})"
                for name, n in few.items()
            )
            raise UsageError(
                f"not saving a machine model from insufficient data: {what}. Every "
                f"parameter needs at least {MIN_SAMPLES} valid samples in each series it "
                "comes from: measure again with a larger --reps-min or --time-budget"
            )

        path = machine_model.save(machine_model.from_loggp(result), args.save)
        sys.stderr.write(f"machine model written to {path}\n")
    sys.stdout.write(loggp_json(result) if args.json else format_loggp(result))
    return 0


def cmd_layers(args) -> int:
    from mpiscope.models.layers import layers_run
    from mpiscope.views.layers import format_layers, layers_json

    check_bootstrap(args)
    if args.min_points < 2:
        raise UsageError(f"--min-points must be at least 2 (got {args.min_points})")
    run_dir = catalog.resolve(args.out, args.run)
    result = layers_run(run_dir, seed=args.seed, n_boot=args.resamples, min_points=args.min_points)
    sys.stdout.write(layers_json(result) if args.json else format_layers(result))
    return 0


def add_loggp_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "loggp",
        cmd_loggp,
        description="""\
LogGP parameters of a run, measured as in Bell et al. (2003):
  EEL   end-to-end latency (oneway: send start to receive end, global clock)
  o_s   send overhead: CPU overlap test (overhead os+<f>g), computation
        between MPI_Isend and MPI_Wait; past the knee, time - computation
  o_r   receive overhead: the same between MPI_Irecv and MPI_Wait (or+<f>g)
  g     gap between small messages (flood, least over the queue depths)
  G     gap per byte: slope of the flood's time per message at large sizes
  L     EEL - o_s - o_r when positive; o_s + o_r > EEL is flagged
        (overlapping overheads: LogP's serial model does not hold)
  g/G   size above which a message is bandwidth-bound
Also o_s(m), o_r(m) and EEL(m) by size, g(m, q) by size and queue depth,
and one-sided put/get (flush, fence) beside two-sided.\
""",
        epilog="""\
examples:
  mpiscope run -n 2 --suite loggp && mpiscope loggp
  mpiscope loggp latest --json
  mpiscope loggp RUN --save machine.json\
""",
    )
    _common(p)
    p.add_argument(
        "--save",
        metavar="FILE",
        type=types.new_file,
        help="also write the parameters as a machine model file (versioned JSON; "
        "never overwrites; refused when a parameter rests on fewer than 6 samples)",
    )


def add_layers_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "layers",
        cmd_layers,
        description="""\
Per layer (layer_pingpong, layer_bw: mpi, tcp, shm) the median time per size
and a piecewise α + β·n fit with automatic breakpoints; per size the share
of MPI's time the lower layer accounts for (lower / MPI), as Piernas et al. (1997) do.\
""",
        epilog="""\
examples:
  mpiscope run -n 2 --bench layer_pingpong,layer_bw --sizes 8-1M:x4
  mpiscope layers
  mpiscope layers latest --json\
""",
    )
    _common(p)
    p.add_argument(
        "--min-points",
        type=types.count(2),
        default=3,
        help="sizes a piecewise segment needs at least (default: %(default)s)",
    )
