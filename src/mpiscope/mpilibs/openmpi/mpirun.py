# SPDX-License-Identifier: BSD-3-Clause
"""Open MPI's mpirun: its command line, its hostfile ('HOST slots=N') and
the options by which --launcher-args take binding, placement or the hostfile
over."""

from __future__ import annotations

from mpiscope.mpilibs.launcher import Launcher


class Mpirun(Launcher):
    name = "mpirun"
    hostfile_form = "slots"
    hostfile_options = ("--hostfile", "-hostfile", "--machinefile", "-machinefile", "--default-hostfile")
    binding_options = ("--bind-to", "-bind-to", "--rankfile", "-rf", "--cpu-set", "--cpu-list")
    mapping_options = (
        "--map-by",
        "-map-by",
        "--npernode",
        "-npernode",
        "-N",
        "--ppr",
        "-ppr",
        "--rankfile",
        "-rf",
        "--host",
        "-host",
        "-H",
    )

    def command(self, *, program, library, np, hostfile, nodes, ppn, oversubscribe, binds, user):
        """Oversubscribed (more ranks than cores somewhere): without a hostfile
        ranks are left unbound and yield; with one, binding is left to it and
        the user."""
        cmd = [program or library.default_launcher, "-n", str(np)]
        if hostfile:
            cmd += ["--hostfile", str(hostfile)]
        if ppn:
            cmd += ["--map-by", f"ppr:{ppn}:node"]
        if oversubscribe:
            cmd.append("--oversubscribe")
            if binds and not hostfile:
                cmd += ["--bind-to", "none"]
            if "mpi_yield_when_idle" not in user:
                # More ranks than cores: without yielding, TCP latency becomes milliseconds.
                cmd += ["--mca", "mpi_yield_when_idle", "1"]
        elif binds:
            cmd += ["--bind-to", "core"]
        return cmd
