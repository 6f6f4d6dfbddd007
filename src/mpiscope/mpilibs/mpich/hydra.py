# SPDX-License-Identifier: BSD-3-Clause
"""Hydra, the mpiexec of MPICH and of Intel MPI: its command line, its
hostfile ('HOST:N') and the options by which --launcher-args take binding,
placement or the hostfile over."""

from __future__ import annotations

from mpiscope.mpilibs.launcher import Launcher


class Hydra(Launcher):
    name = "mpiexec"
    hostfile_form = "colon"
    hostfile_options = ("-f", "-hostfile", "--hostfile", "-machinefile", "--machinefile", "-machine")
    binding_options = ("-bind-to", "--bind-to", "-binding")
    mapping_options = ("-ppn", "--ppn", "-perhost", "-rr", "-hosts", "-host", "--host")

    def command(self, *, program, library, np, hostfile, nodes, ppn, oversubscribe, binds, user):
        """Oversubscribed with a hostfile, binding is left to it and the user;
        oversubscribed at all, the settings for sharing cores go along."""
        cmd = [program or library.default_launcher, "-n", str(np)]
        if hostfile:
            cmd += ["-f", str(hostfile)]
        if ppn:
            cmd += ["-ppn", str(ppn)]
        if binds and not (oversubscribe and hostfile):
            cmd += ["-bind-to", "none" if oversubscribe else "core"]
        if oversubscribe:
            # What lets the ranks of each library launched as this one share
            # cores (Intel MPI's; MPICH reads none of them), unless the user set it.
            from mpiscope import mpilibs

            shared = {
                k: v
                for lib in mpilibs.launched_as(library.launcher_family)
                for k, v in lib.oversubscribed_settings.items()
                if k not in user
            }
            cmd += library.settings_words(shared)
        return cmd
