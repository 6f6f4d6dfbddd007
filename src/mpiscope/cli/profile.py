# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope profile [options] -- LAUNCH COMMAND…` (run an application under
the interposition profiler and store the run) and `mpiscope profile weights
RUN` (the tuner's weights from a stored profile).

`weights` is a subcommand that is looked for before the launch command is
read, so a launch command can be anything after `--`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mpiscope.cli.commands import command_parser
from mpiscope.cli import types
from mpiscope.cli.options import RUN_REF, add_json, add_mpi, add_out, output_file
from mpiscope.common.errors import UsageError

DEFAULT_TRACE_EVENTS = 1_000_000
MAX_TRACE_EVENTS = 100_000_000  # events a rank keeps at most: each takes memory in the rank


def cmd_profile(args) -> int:
    from mpiscope.profile import summary
    from mpiscope.measure.request import LaunchRequest
    from mpiscope.profile.runner import launch_output, profile
    from mpiscope.common.documents import json_document
    from mpiscope.views.profile import format_profile, profile_doc

    at = LaunchRequest(mpicc=args.mpicc, mpi=args.mpi, cluster=args.cluster, np=args.np)
    run_dir, context = profile(
        args.launch,
        at,
        out=Path(args.out),
        trace_events=args.trace or 0,
        library_view=args.library_view,
        label=args.label,
        argv=sys.argv,
    )
    p = summary.load(run_dir)
    sys.stdout.write(json_document("profile", profile_doc(p)) if args.json else format_profile(p))
    print(f"mpiscope: stored {run_dir}", file=sys.stderr)
    if context.get("warning"):
        print(f"mpiscope: warning: {context['warning']}", file=sys.stderr)
    if context["status"] != "completed":
        tail = launch_output(run_dir)
        if tail.strip():
            sys.stderr.write(tail if tail.endswith("\n") else tail + "\n")
        print(f"mpiscope: error: {context['error']}", file=sys.stderr)
        return 1
    return 0


def cmd_weights(args) -> int:
    from mpiscope.common.atomic import write_text
    from mpiscope.profile import summary
    from mpiscope.profile.weights import weights
    from mpiscope.store import catalog
    from mpiscope.common.jsonable import dumps

    target = None if args.output in (None, "-") else output_file(args.output)
    run_dir = catalog.resolve(args.out, args.run)
    p = summary.load(run_dir)
    if p.context.get("kind") != "profile":
        raise UsageError(
            f"run {p.context.get('run_id')} is a measurement, not a profile: weights come from "
            f"`mpiscope profile -- …` runs"
        )
    text = dumps(weights(p))
    if target is None:
        sys.stdout.write(text)
        return 0
    write_text(target, text)
    return 0


def add_profile_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "profile",
        cmd_profile,
        description="""\
Run an application's own launch command with mpiscope's interposition
library in its ranks and store what they did as a run of kind
"profile": per call, communicator size, channel (self, same node, other
node) and log2 size bin the calls, bytes and time inside MPI; the
point-to-point peer matrix; call sites. `mpiscope show` and `mpiscope
report` present it; `mpiscope profile weights RUN` writes a tuner's
weights from it.\
""",
        epilog="""\
examples:
  mpiscope profile -- mpirun -n 4 lmp -in in.lj
  mpiscope profile --library-view --label hpcc -- mpirun -n 4 hpcc
  mpiscope profile --mpi mpich --trace -- mpiexec -n 2 ./app
  mpiscope profile --cluster c2 -n 4 -- lmp -in in.lj
  mpiscope profile weights latest -o weights.json\
""",
    )
    p.add_argument(
        "--trace",
        nargs="?",
        type=types.count(1, MAX_TRACE_EVENTS),
        const=DEFAULT_TRACE_EVENTS,
        metavar="N",
        help="also keep every call as an event, at most N per rank (default N: "
        f"{DEFAULT_TRACE_EVENTS}), on the engine's synchronized clock",
    )
    p.add_argument(
        "--library-view",
        action="store_true",
        help="Open MPI: also record what the library really sent (its pml monitoring component)",
    )
    p.add_argument("--label", metavar="TEXT", type=types.label, help="a name for the run")
    p.add_argument(
        "--cluster",
        metavar="NAME",
        type=types.cluster_name,
        help="start the application on the emulated cluster NAME (see 'mpiscope cluster up'), one "
        "rank per slot, h0's slots first; then the command after -- is the application alone",
    )
    p.add_argument(
        "-n", dest="np", type=types.count(1), metavar="N", help="with --cluster: ranks (default: all its slots)"
    )
    add_mpi(p)
    add_json(p, "print the profile as JSON")
    add_out(p)
    p.add_argument(
        "launch",
        nargs=argparse.REMAINDER,
        metavar="-- COMMAND",
        help="the application's launch command, as you would run it",
    )
    sub = p.add_subparsers(dest="profile_command", metavar="weights", parser_class=subparsers._parser_class)
    w = sub.add_parser(
        "weights",
        help="write the tuner's weights of a profile run (versioned JSON)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="""\
Per collective and communicator size of a profile run: the calls, bytes
and time, and how they spread over message sizes (log2 bins), as
versioned JSON (docs/schemas/profile-weights.schema.json).\
""",
    )
    w.add_argument(
        "run", metavar="RUN", nargs="?", default="latest", type=types.run_ref, help=f"the profile run: {RUN_REF}"
    )
    w.add_argument(
        "-o", "--output", metavar="FILE", type=types.output_file, help="write to FILE (replaced atomically), not stdout"
    )
    add_out(w)
    w.set_defaults(func=cmd_weights)

    class _ProfileParser(p.__class__):  # type: ignore[name-defined]
        """`weights` first: the weights subcommand; anything else: options and the launch command."""

        def _get_positional_actions(self):
            return [a for a in super()._get_positional_actions() if not isinstance(a, argparse._SubParsersAction)]

        def parse_known_args(self, args=None, namespace=None):
            args = list(args or [])
            if args[:1] == ["weights"]:
                w.set_defaults(out=self.get_default("out"))  # MPISCOPE_OUT, config files
                return w.parse_known_args(args[1:], namespace)
            return super().parse_known_args(args, namespace)

    p.__class__ = _ProfileParser
