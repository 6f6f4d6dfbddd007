# SPDX-License-Identifier: BSD-3-Clause
"""One package per MPI library family (openmpi/, mpich/, intelmpi/), each
holding a subclass of library.MpiLibrary as LIBRARY: everything mpiscope
does differently for a library is asked of it here.

A new library is one new package and its name in MODULES below."""

from __future__ import annotations

from importlib import import_module

from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.library import MpiLibrary

# The order counts where two recognize the same text (from_library_text): MPICH before
# its derivatives.
MODULES = ("openmpi", "mpich", "intelmpi")

LIBRARIES = tuple(import_module(f"{__name__}.{m}").LIBRARY for m in MODULES)


def get(key: str) -> MpiLibrary:
    """The library of a registry key (--mpi KEY, a run's "mpi", a catalog's library)."""
    for lib in LIBRARIES:
        if lib.key == key:
            return lib
    raise UsageError(f"unknown MPI library '{key}'; mpiscope knows {', '.join(lib.key for lib in LIBRARIES)}")


def by_implementation(implementation: str) -> MpiLibrary | None:
    """The library the identity probe (native/engine/probe/mpi_identity.c) names, or None."""
    return next((lib for lib in LIBRARIES if implementation in lib.implementations), None)


def of(mpi) -> MpiLibrary:
    """The library of an identified MPI (engine/mpi.py's Installation)."""
    return by_implementation(mpi.implementation)


def from_library_text(text: str) -> MpiLibrary | None:
    """The library whose MPI_Get_library_version text this is, or None."""
    return next((lib for lib in LIBRARIES if lib.recognizes(text)), None)


def launched_as(launcher_family: str) -> tuple:
    """The libraries launched as library `launcher_family` is (its own key among them)."""
    return tuple(lib for lib in LIBRARIES if lib.launcher_family == launcher_family)


def with_debian_wrapper() -> tuple:
    """The libraries `--mpi KEY` chooses: those with a Debian compiler wrapper."""
    return tuple(lib for lib in LIBRARIES if lib.debian_wrapper)


def path_families() -> tuple:
    """Every library's intra-node path families (mpilibs/intranode.py), each once."""
    out = []
    for lib in LIBRARIES:
        out += [f for f in lib.path_families if f not in out]
    return tuple(out)


def path_family_named(name: str | None):
    """The path family called `name` (MpiLibrary.path_family), or None."""
    return next((f for f in path_families() if f.name == name), None)
