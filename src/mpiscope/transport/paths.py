# SPDX-License-Identifier: BSD-3-Clause
"""MPI libraries' own intra-node paths, measured by ordinary pingpong and bw
runs whose launcher options or environment choose the mechanism (recorded
in the run's context): Open MPI's vader/sm with single copy by CMA or none,
UCX (Open MPI's pml ucx, MPICH's ch4:ucx) with or without its cma transport.

A family measured both ways gives the library's own crossover, which is
what its settings should follow: its copy path is not the lab's (Open MPI's
copy-only path pipelines 32 KiB fragments through one FIFO, far slower than
the lab's ring for large messages)."""

from __future__ import annotations

from mpiscope import mpilibs
from mpiscope.mpilibs.intranode import COPY, SINGLE  # noqa: F401 (the modes, as runs are read)
from mpiscope.mpilibs.launch_settings import launch_setting


def family(library: str) -> str | None:
    """The path family of a library's MPI_Get_library_version text (its library says)."""
    lib = mpilibs.from_library_text(library or "")
    return lib.path_family(library) if lib else None


def mechanism(run) -> tuple:
    """(family, COPY | SINGLE, what chose it) of a run's library path (its
    path family reads the run's settings, mpilibs/intranode.py); family None
    when the library is not one we know."""
    fam = family(run.context.get("mpi_library") or run.library)
    paths = mpilibs.path_family_named(fam)
    if paths is None:
        return fam, None, ""
    words = list((run.plan or {}).get("launcher_args") or [])
    env = run.context.get("env") or {}
    return (fam, *paths.mechanism(lambda name: launch_setting(words, env, name)))
