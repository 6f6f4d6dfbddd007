# SPDX-License-Identifier: BSD-3-Clause
"""A user's own command run by mpiscope (`mpiscope profile`, `mpiscope app
compare`): the launch command after `--` checked before anything runs, and
an application started on an emulated cluster as `mpiscope run --cluster`
starts the engine."""

from __future__ import annotations

import shutil

from mpiscope.common.errors import UsageError


def check_command(command, example: str):
    """The command after `--`: present, and its program found. `example`:
    a command line that shows how to give it."""
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        raise UsageError(f"give the application's launch command after --, e.g. {example}")
    if shutil.which(command[0]) is None:
        raise UsageError(
            f"'{command[0]}' was not found or is not executable: give the launcher (mpirun, "
            f"mpiexec, srun) or the program as you would run it"
        )
    return list(command)


def on_cluster(name, mpi, np, command, preload=()):
    """The launch of `command` (the application and its arguments) on `np`
    slots (None: all) of emulated cluster `name`, one rank per slot, h0's
    first: (argv, base environment, {"cluster": ground truth with the
    placement}). `preload`: libraries the ranks alone load, for a library
    whose launcher hands them to the ranks (mpilibs: launcher_preloads)."""
    from mpiscope.cluster.launching import cluster_launch
    from mpiscope.engine.mpi import is_debian

    if not is_debian(mpi):
        raise UsageError(
            f"--cluster starts Debian's Open MPI or MPICH on the emulated hosts; "
            f"{mpi.wrapper} ({mpi.name}) is neither: use --mpi openmpi|mpich there"
        )
    if np is None:
        from mpiscope.cluster import state as st

        spec = st.load(name)[1].spec
        np = spec.hosts * spec.slots
    argv, env, extra = cluster_launch(name, mpi.launcher_family, np, command[0], command[1:], preload=preload)
    return argv, env, {"cluster": extra["cluster"]}
