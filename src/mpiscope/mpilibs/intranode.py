# SPDX-License-Identifier: BSD-3-Clause
"""A library's intra-node path family, for the transport lab (transport/):
how a run of it chose copying through shared memory or a single copy
(mechanism), how to force its copy path for a second run (copy_words), and
the settings that follow from where single copy starts to win (rules).

Families differ within a library (Open MPI 4's btl vader, 5's btl sm and
smsc; MPICH on UCX or on its own shared memory), so each library module
lists its own (MpiLibrary.path_families) and names the one a run used
(MpiLibrary.path_family)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

COPY, SINGLE = "copy", "single copy"


@dataclass(frozen=True)
class PathRule:
    """One setting: launcher words or variables, and the message sizes whose
    path it changes, (low, high] in bytes (high None: no bound)."""

    name: str
    launcher_args: tuple = ()
    env: tuple = ()  # ((variable, value), ...)
    low: int = 0
    high: int | None = None


class PathFamily:
    name: str  # what runs and advise key it by: "Open MPI 4"
    label: str  # the heading of its settings: "Open MPI 4.x (btl vader)"
    measure_mpi: str  # how `mpiscope run` chooses the library: "--mpi openmpi"
    copy_words: str  # --launcher-args forcing its copy path

    def mechanism(self, setting: Callable) -> tuple:
        """(COPY or SINGLE, what chose it) of a run; `setting(name)`: the value
        its launcher words or environment gave `name`, or None."""
        raise NotImplementedError

    def rules(self, single_from: int | None, copy_max: int | None) -> list:
        """[PathRule]: single copy from `single_from` (None: never), copying
        up to `copy_max` (None: at no size measured)."""
        raise NotImplementedError
