# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope build [--mpicc PATH | --mpi openmpi|mpich]`: build the engine
for an MPI ahead of time and say what was found."""

import sys
import time

from mpiscope.cli.commands import command_parser
from mpiscope.cli.options import add_json, add_mpi


def cmd_build(args) -> int:
    from mpiscope import mpilibs
    from mpiscope.engine.build import engine_path, ensure_engine
    from mpiscope.engine.mpi import find_mpi

    mpi = find_mpi(mpicc=args.mpicc, mpi=args.mpi)
    was_built = engine_path(mpi).exists()
    started = time.monotonic()
    engine = ensure_engine(mpi)
    found = {
        **mpi.identity(),
        "engine": str(engine),
        "was_built": was_built,
        "seconds": round(time.monotonic() - started, 1),
    }
    if args.json:
        from mpiscope.common.documents import json_document

        sys.stdout.write(json_document("build", found))
        return 0
    library = mpi.library.splitlines()[0] if mpi.library else ""
    style = mpilibs.get(mpi.launcher_family).title
    rows = [
        ("MPI", f"{mpi.name} (MPI {mpi.standard}; launched {style}-style)"),
        ("library", library),
        ("mpicc", mpi.wrapper),
        ("compiles", mpi.show),
        ("launcher", mpi.launcher or "none beside mpicc: give --mpirun PROGRAM to 'mpiscope run'"),
        ("engine", f"{engine} ({'up to date' if was_built else 'built'} in {found['seconds']} s)"),
    ]
    print("\n".join(f"{name:<9} {value}" for name, value in rows))
    return 0


def add_build_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "build",
        cmd_build,
        description="""\
Build the engine for an MPI now (mpiscope run builds it the first time
otherwise), and print what was found: the implementation and version the
library reports, the wrapper's compile line, the launcher beside it and the
engine binary. Each MPI has its own build, keyed by its compile line and
library version, in the checkout's build/ or the user's cache directory.\
""",
        epilog="""\
examples:
  mpiscope build
  mpiscope build --mpi mpich
  mpiscope build --mpicc /opt/openmpi-5/bin/mpicc\
""",
    )
    add_mpi(p)
    add_json(p, "print what was found as JSON")
