# SPDX-License-Identifier: BSD-3-Clause
"""A launcher program, as mpiscope drives it: the words that start np ranks,
and which of its options bind ranks, place them or name a hostfile of its
own, so that --launcher-args giving one of those take that over."""

from __future__ import annotations

from abc import ABC, abstractmethod


class Launcher(ABC):
    name: str  # what users call it: mpirun, mpiexec, srun
    hostfile_form: str  # the hostfile it reads: a form of common/hostfiles.py
    hostfile_options: tuple = ()  # options naming a hostfile of its own
    binding_options: tuple = ()
    mapping_options: tuple = ()

    @abstractmethod
    def command(self, *, program, library, np, hostfile, nodes, ppn, oversubscribe, binds, user) -> list:
        """The words before the user's (--launcher-args, `user`): `program`
        the launcher to run (None: the library's default_launcher), `library`
        the MpiLibrary whose ranks it starts, `hostfile` already in its own
        form, `binds`: mpiscope binds ranks (the user's words do not)."""
