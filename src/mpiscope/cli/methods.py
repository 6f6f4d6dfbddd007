# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope methods RUN`: what OSU, IMB, SKaMPI, Mpptest and MPIBench would
print for the run's operations, and why each differs from mpiscope's median."""

from __future__ import annotations

import sys

from mpiscope.cli.commands import command_parser
from mpiscope.cli.options import add_json, add_out, add_run


def cmd_methods(args) -> int:
    from mpiscope.methods.result import methods_of_run
    from mpiscope.store import catalog
    from mpiscope.views.methods import format_methods, methods_json

    result = methods_of_run(catalog.resolve(args.out, args.run))
    sys.stdout.write(methods_json(result) if args.json else format_methods(result))
    return 0


def add_methods_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "methods",
        cmd_methods,
        description="""\
For a run measured with `mpiscope run --methods`: per benchmark and size, the number each peer
tool prints (derived from the rows stored as that tool times them, exactly as it computes
it), beside mpiscope's median and its 95% CI; and the difference between each tool's number
and the median split into measured causes (the tool's statistic, whose ranks count, the
barrier, back-to-back overlap, cache, root rotation, definition) that add up to it, with
the rest stated as unexplained.\
""",
        epilog="""\
examples:
  mpiscope run -n 2 --bench pingpong,allreduce,bcast --sizes 8,64K --methods osu,imb
  mpiscope methods latest
  mpiscope methods latest --json\
""",
    )
    add_run(p)
    add_json(p, "print JSON (base units: s, B/s)")
    add_out(p)
