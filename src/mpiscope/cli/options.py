# SPDX-License-Identifier: BSD-3-Clause
"""Options shared by many commands, defined once: the run to read (RUN),
the output root (--out), JSON output (--json), the random seed (--seed),
the bootstrap (--seed, --resamples) and the MPI (--mpicc, --mpi); and the
check of an output file (-o FILE)."""

from __future__ import annotations

import argparse

from mpiscope.cli import types
from mpiscope.common.errors import UsageError
from mpiscope.store.layout import DEFAULT_OUT, check_out_root

RUN_REF = "a run id, a unique prefix of one, a run's --label, a path to a run directory, or 'latest'"


path = types.path
MAX_RESAMPLES = 100_000  # bootstrap resamples at most: beyond, the intervals no longer change


def out_root(text):
    """argparse type of --out: a directory, or a path where one can be made."""
    path(text)
    try:
        return check_out_root(text, what="")
    except UsageError as e:
        raise argparse.ArgumentTypeError(str(e).strip()) from None


out_root.kind = "out_root"  # type: ignore[attr-defined]


def add_run(p, what="the run") -> None:
    """Positional RUN, 'latest' when left out."""
    p.add_argument(
        "run",
        metavar="RUN",
        nargs="?",
        default="latest",
        type=types.run_ref,
        help=f"{what}: {RUN_REF} (default: latest)",
    )


def add_out(p, of_parent=None) -> None:
    """--out DIR. `of_parent`: the command above a subcommand that has --out
    as well; left out after the subcommand, --out keeps the parent's value
    (argparse would otherwise reset it to the default)."""
    if of_parent:
        p.add_argument(
            "--out",
            metavar="DIR",
            default=argparse.SUPPRESS,
            type=out_root,
            help=f"output root holding the run directories (default: as for {of_parent})",
        )
        return
    p.add_argument(
        "--out",
        metavar="DIR",
        default=DEFAULT_OUT,
        type=out_root,
        help="output root holding the run directories (default: %(default)s)",
    )


def add_json(p, what="print JSON") -> None:
    p.add_argument("--json", action="store_true", help=what)


def add_seed(p, what="bootstrap seed") -> None:
    p.add_argument("--seed", type=types.seed, default=1, help=f"{what} (default: %(default)s)")


def add_mpi(p) -> None:
    """--mpicc and --mpi: which MPI the engine is built with and runs on (engine/mpi.py)."""
    from mpiscope import mpilibs

    debian = mpilibs.with_debian_wrapper()
    wrappers = " or ".join(lib.debian_wrapper for lib in debian)
    p.add_argument(
        "--mpicc",
        metavar="PATH",
        type=types.program,
        help="the MPI's C compiler wrapper: any MPI (default: $MPISCOPE_MPICC, else Debian's "
        f"{wrappers}, else mpicc on PATH)",
    )
    p.add_argument(
        "--mpi",
        choices=tuple(lib.key for lib in debian),
        help="shorthand for Debian's wrappers: --mpicc " + " | ".join(lib.debian_wrapper for lib in debian),
    )


def add_bootstrap(p, resamples=1000) -> None:
    """--seed and --resamples of the commands whose intervals are bootstrapped."""
    add_seed(p)
    p.add_argument(
        "--resamples",
        type=types.count(2, MAX_RESAMPLES),
        default=resamples,
        help=f"bootstrap resamples, 2 to {MAX_RESAMPLES} (default: %(default)s)",
    )


def check_bootstrap(args) -> None:
    if args.resamples < 2:
        raise UsageError(f"--resamples must be at least 2 (got {args.resamples})")
    if args.seed < 0:
        raise UsageError(f"--seed must be >= 0 (got {args.seed})")


def output_file(text) -> str:
    """-o FILE of a command writing one file: a path atomic.py can write (a file
    name in a directory that exists, a device, a FIFO), refused with a
    UsageError otherwise, before anything is written."""
    from mpiscope.common.atomic import target

    target(text)
    return str(text)
