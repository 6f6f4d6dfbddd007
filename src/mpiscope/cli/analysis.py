# SPDX-License-Identifier: BSD-3-Clause
"""The analysis subcommands: fit and compare.

Each handler takes the parsed arguments and returns an exit code; bad input
raises UsageError, which the main CLI turns into a message and exit code 2.
"""

from __future__ import annotations

import sys

from mpiscope.store import catalog
from mpiscope.stats.compare import DEFAULT_ALPHA, DEFAULT_BOOT as COMPARE_BOOT, DEFAULT_NOISE, compare
from mpiscope.views.compare import compare_json, format_compare
from mpiscope.common.errors import UsageError
from mpiscope.views.fit import fit_json, format_fit
from mpiscope.models.fits import DEFAULT_BOOT as FIT_BOOT, fit_run
from mpiscope.common.sizes import parse_size_option
from mpiscope.cli.options import RUN_REF, add_bootstrap, add_json, add_out, add_run, check_bootstrap
from mpiscope.cli import types
from mpiscope.cli.percent import parse_percent
from mpiscope.cli.commands import command_parser


def parse_noise(text: str) -> float:
    """'2%' -> 0.02; '0.02' -> 0.02 (cli/percent.py)."""
    return parse_percent(text, "--noise")


def cmd_fit(args) -> int:
    check_bootstrap(args)
    if args.min_points < 2:
        raise UsageError(f"--min-points must be at least 2 (got {args.min_points})")
    run_dir = catalog.resolve(args.out, args.run)
    result = fit_run(run_dir, seed=args.seed, n_boot=args.resamples, bench=args.bench, min_points=args.min_points)
    sys.stdout.write(fit_json(result) if args.json else format_fit(result))
    return 0


def cmd_compare(args) -> int:
    noise = parse_noise(args.noise)
    check_bootstrap(args)
    size = parse_size_option("--size", args.size) if args.size is not None else None
    run_a = catalog.resolve(args.out, args.run_a)
    run_b = catalog.resolve(args.out, args.run_b)
    result = compare(
        run_a, run_b, noise=noise, alpha=args.alpha, seed=args.seed, n_boot=args.resamples, bench=args.bench, size=size
    )
    sys.stdout.write(compare_json(result) if args.json else format_compare(result))
    return 0


def add_fit_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "fit",
        cmd_fit,
        description="""\
Fit T(n) = α + β·n per benchmark to the median time at each size:
  Hockney    one line, robust (weighted least absolute deviations),
             with asymptotic bandwidth 1/β and n½ = α/β (the size
             reaching half of it)
  piecewise  one line per zone of sizes, breakpoints (protocol switches
             such as eager -> rendezvous) chosen automatically (BIC)
CIs come from a seeded bootstrap over the samples of each size.
bw and bibw are fitted as time per message = size / bandwidth.
Flagged: α < 0, β <= 0 (1/β then not printed), Hockney R² < 0.9.\
""",
        epilog="""\
examples:
  mpiscope fit
  mpiscope fit 2024 --bench pingpong
  mpiscope fit latest --json\
""",
    )
    add_run(p)
    p.add_argument("--bench", type=types.text, help="fit only this benchmark")
    p.add_argument(
        "--min-points",
        type=types.count(2),
        default=3,
        help="sizes a piecewise segment needs at least (default: %(default)s)",
    )
    add_bootstrap(p, FIT_BOOT)
    add_json(p, "print the fits as JSON (seconds, s/B, B/s, bytes)")
    add_out(p)


def add_compare_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "compare",
        cmd_compare,
        description="""\
Compare run B against run A per benchmark × size present in both:
the ratio of medians B / A with a bootstrap CI, a two-sided Mann-Whitney
U test, and a verdict: faster or slower only when p < alpha AND the
whole CI lies outside the noise band 1 ± noise; otherwise same. For
bw/bibw higher is faster. Below 6 valid samples in a run (more for a
small alpha: what the U test needs) the verdict is insufficient. A
geometric mean of the time ratios of the judged rows sums up.
Runs may differ in MPI library, configuration and hosts; benchmark ×
sizes measured in only one run are listed, not compared.\
""",
        epilog="""\
examples:
  mpiscope compare 20240301 20240302
  mpiscope compare A B --noise 5% --bench pingpong --size 8
  mpiscope compare A B --json\
""",
    )
    p.add_argument("run_a", metavar="RUN_A", type=types.run_ref, help=f"the baseline run: {RUN_REF}")
    p.add_argument("run_b", metavar="RUN_B", type=types.run_ref, help=f"the run compared with it: {RUN_REF}")
    p.add_argument(
        "--noise",
        default=f"{DEFAULT_NOISE * 100:g}%",
        type=types.percent,
        help="noise band: changes within ± this are 'same'; 2%% or 0.02 (default: %(default)s)",
    )
    p.add_argument(
        "--alpha", default=DEFAULT_ALPHA, type=types.level, help="significance level of the test (default: %(default)s)"
    )
    p.add_argument("--bench", type=types.text, help="compare only this benchmark")
    p.add_argument("--size", type=types.size, help="compare only this size (bytes; units B/K/M/G)")
    add_bootstrap(p, COMPARE_BOOT)
    add_json(p, "print the comparison as JSON")
    add_out(p)
