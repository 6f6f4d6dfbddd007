# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope transport probe` and `mpiscope transport advise RUN [--verify]`:
the intra-node transport lab (native/transport/, engine benchmarks tp_*)."""

from __future__ import annotations

import argparse
import shlex
import sys

from mpiscope.common.errors import UsageError
from mpiscope.cli import types
from mpiscope.cli.commands import command_parser
from mpiscope.cli.options import add_json, add_mpi, add_out


def cmd_probe(args) -> int:
    from mpiscope.engine.mpi import find_mpi
    from mpiscope.transport.probe import format_probe, probe
    from mpiscope.views.transport import probe_json

    p = probe(find_mpi(mpicc=args.mpicc, mpi=args.mpi))
    sys.stdout.write(probe_json(p) if args.json else format_probe(p))
    return 0


def _launcher_words(settings, library) -> list:
    """How the settings reach the ranks: the library's own flags, and the
    variables as its launcher passes them (mpilibs: env_words)."""
    from mpiscope import mpilibs

    lib = mpilibs.from_library_text(library or "") or mpilibs.get("mpich")
    return list(settings.launcher_args) + lib.env_words(settings.env)


def _measure(run, words, label, args):
    """One pingpong,bw run with the lab run's MPI and ranks, plus `words` for the launcher."""
    from mpiscope.measure import runner
    from mpiscope.measure.plan import make_plan

    request = _verification_request(run, words, label, args)
    run_dir, context = runner.run(make_plan(request), _recorded_command(request))
    if context.get("status") != "completed":
        raise UsageError(f"the verification run {run_dir.name} failed: {context.get('error')}")
    return run_dir


def _verification_request(run, words, label, args):
    """The MeasureRequest of one verification run (see _measure)."""
    from mpiscope.measure.request import LaunchRequest, MeasureRequest

    mpicc = (run.plan or {}).get("mpicc")
    at = LaunchRequest(
        np=2,
        mpicc=mpicc or None,
        mpi=None if mpicc else run.mpi or None,
        launcher_args=shlex.join(words) if words else None,
    )
    return MeasureRequest(
        launch=at, bench="pingpong,bw", sizes=args.verify_sizes, time_budget=args.time_budget, out=args.out, label=label
    )


def _recorded_command(request) -> list:
    """What a verification run's context records as its command: the run
    options the request stands for (a record, never parsed again)."""
    at = request.launch
    words = [
        "-n",
        str(at.np),
        "--bench",
        request.bench,
        "--sizes",
        request.sizes,
        "--time-budget",
        str(request.time_budget),
        "--out",
        str(request.out),
        "--label",
        request.label,
    ]
    words += ["--mpicc", at.mpicc] if at.mpicc else ["--mpi", at.mpi] if at.mpi else []
    if at.launcher_args:
        words += ["--launcher-args", at.launcher_args]
    return ["mpiscope", "transport", "advise", "--verify", *words]


def _verify(advice, args):
    """(the settings advised, [Pass], withdrawn, the settings left): defaults
    and advised launched alternately; rules behind a slower size withdrawn
    and the rest verified again (transport/verify.py)."""
    from mpiscope.transport.settings import for_library
    from mpiscope.transport.verify import ADVISED, judge, launch_order, pooled, verify_settings

    run = advice.lab.runs[0]
    cls = advice.lab.placements()[0]
    lib = run.context.get("mpi_library") or ""
    chosen = for_library(advice.settings[cls], lib)
    if chosen is None:
        from mpiscope import mpilibs

        known = " and ".join(lib.title for lib in mpilibs.LIBRARIES if lib.path_families)
        raise UsageError(f"--verify knows the settings of {known}, not of '{run.library}'")
    if not chosen.measured:
        raise UsageError(
            f"the settings for {chosen.library} keep its defaults: its own paths were not "
            "measured. Add runs of them to advise (the commands are printed above its "
            "settings), then --verify"
        )
    tag = run.label or run.run_id
    passes = []

    def measure(settings):
        words = _launcher_words(settings, lib)
        launches = []
        for k, side in enumerate(launch_order(args.verify_rounds)):
            label = f"{tag}-{side}-{k}" + (f"-pass{len(passes) + 1}" if passes else "")
            launches.append((side, _measure(run, words if side == ADVISED else [], label, args)))
        passes.append(settings)
        sides = {s: pooled([d for x, d in launches if x == s]) for s in ("defaults", ADVISED)}
        rounds = [
            tuple(pooled([d for x, d in launches[k : k + 2] if x == s]) for s in ("defaults", ADVISED))
            for k in range(0, len(launches), 2)
        ]
        return launches, judge(sides["defaults"], sides[ADVISED], rounds=rounds)

    return (chosen, *verify_settings(chosen, measure))


def cmd_advise(args) -> int:
    from mpiscope.store import catalog
    from mpiscope.transport.advise import advise
    from mpiscope.views.transport import advice_json, format_advice, format_verify

    dirs = [catalog.resolve(args.out, r) for r in args.run]
    a = advise(dirs)
    if not args.verify:
        sys.stdout.write(advice_json(a) if args.json else format_advice(a))
        return 0
    if not args.json:
        sys.stdout.write(format_advice(a))
        sys.stdout.flush()
    chosen, passes, withdrawn, final = _verify(a, args)
    from mpiscope.transport.verify import needed

    lib = a.lab.runs[0].context.get("mpi_library") or ""

    def pass_doc(p):
        return {
            "launcher_args": _launcher_words(p.settings, lib),
            "launches": [{"side": s, "run": d.name} for s, d in p.launches],
            "rows": [r.to_dict() for r in p.rows],
        }

    first = pass_doc(passes[0])
    doc = {
        "library": chosen.library,
        "min_samples": needed(),
        **first,
        "passes": [pass_doc(p) for p in passes],
        "withdrawn": [
            {**rule.to_dict(), "because": [{"bench": r.bench, "size": r.size, "speedup": r.speedup} for r in rows]}
            for rule, rows in withdrawn
        ],
        "final": final.to_dict(),
    }
    sys.stdout.write(advice_json(a, doc) if args.json else format_verify(doc))
    return 0


def add_transport_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "transport",
        description="""\
The intra-node transport lab (after Chai 2009): designs of a shared-memory channel
(basic ring, advanced queue + pool, cma single copy, offload helper thread,
hybrid) measured by the engine's tp_* benchmarks beside MPI's own path.
  probe    whether CMA works here (and exactly why not), placement classes
  advise   crossovers per placement class and cache state, settings per library\
""",
        epilog="""\
examples:
  mpiscope transport probe
  mpiscope run -n 2 --suite transport --label lab
  mpiscope transport advise lab
  mpiscope transport advise lab --verify --verify-sizes 4K-4M:x4\
""",
    )
    add_out(p)
    sub = p.add_subparsers(dest="transport_command", metavar="COMMAND", required=True)
    pr = sub.add_parser(
        "probe",
        help="whether CMA works here (and why not); the placement classes",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_mpi(pr)
    add_json(pr)
    pr.set_defaults(func=cmd_probe)
    ad = sub.add_parser(
        "advise",
        help="crossovers and the settings per MPI library",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ad.add_argument(
        "run",
        metavar="RUN",
        nargs="*",
        default=["latest"],
        type=types.run_ref,
        help="lab runs (tp_* benchmarks), one per placement class if several (default: latest)",
    )
    ad.add_argument(
        "--verify",
        action="store_true",
        help="re-measure MPI's pingpong and bw with the library's defaults and with "
        "the advised settings, launched alternately (D A A D ...), judged per size "
        "by compare's test and noise band",
    )
    ad.add_argument(
        "--verify-rounds",
        type=types.count(1, 100),
        default=2,
        metavar="N",
        help="rounds of the alternation, two launches each (default: %(default)s: D A A D)",
    )
    ad.add_argument(
        "--verify-sizes",
        default="1K-4M:x4",
        metavar="LIST",
        type=types.size_list,
        help="sizes of the verification runs (default: %(default)s)",
    )
    ad.add_argument(
        "--time-budget",
        type=types.seconds,
        default=0.5,
        metavar="S",
        help="seconds per benchmark x size in the verification runs (default: %(default)s)",
    )
    add_json(ad, "print the crossovers and settings as JSON (base units s, B/s, B)")
    add_out(ad, of_parent="transport")
    ad.set_defaults(func=cmd_advise)
