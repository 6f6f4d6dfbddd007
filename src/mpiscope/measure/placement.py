# SPDX-License-Identifier: BSD-3-Clause
"""Where a run's ranks go: -n, -N/--nodes, --ppn, the hostfile, the words
added to the launcher's command, and whether a machine gets more ranks than
it has cores (then mpiscope binds no rank, and says so when a hostfile asked
for it). Checked before anything is written."""

from __future__ import annotations

import shlex
from pathlib import Path

from mpiscope.common import hostfiles
from mpiscope.common.errors import UsageError
from mpiscope.measure import launch
from mpiscope.measure.launch import local_cpus

# Ranks a slot may take before mpiscope refuses the count: Open MPI runs a few
# ranks a core (oversubscribed, yielding) and tests do, but a count far beyond
# the slots only hangs the launcher or the machine. A hostfile with more slots
# or --launcher-args that place the ranks themselves lift the limit.
RANKS_PER_SLOT = 16


def resolve(at, launcher_family, cluster, default_np):
    """{np, nodes, ppn, hosts, hostfile, launcher_args, oversubscribe, notes}
    for the Plan, from the LaunchRequest `at`, for an MPI of `launcher_family`
    ("openmpi" or "mpich"). -n
    defaults to nodes x ppn, else the hostfile's slots, else --ppn, else
    `default_np(cluster)`."""
    nodes, ppn, np = at.nodes, at.ppn, at.np
    for name, value in (("-n/--np", np), ("-N/--nodes", nodes), ("--ppn", ppn)):
        if value is not None and value < 1:
            raise UsageError(f"{name} must be at least 1, got {value}")
    words = launcher_words(at)
    if cluster and (nodes or ppn):
        raise UsageError(
            "--cluster places one rank per slot of the emulated hosts: drop -N/--nodes "
            "and --ppn (choose -n, or the cluster's --slots)"
        )
    kind = launch.launcher_of(launcher_family, at.launcher)
    if (nodes or ppn) and launch.gives(words, kind.mapping_options):
        raise UsageError(
            "-N/--nodes and --ppn place the ranks, and so do the --launcher-args "
            f"'{at.launcher_args}': give one or the other"
        )
    ppn = _ranks_per_node(np, nodes, ppn)
    hosts = _hosts(at.hostfile, nodes, ppn)
    own = [
        hostfiles.read(f, "--launcher-args hostfile", kind.hostfile_form)
        for f in hostfiles.named_in(words, kind.hostfile_options)
    ]
    if np is None and nodes:
        np = nodes * ppn
    elif np is None and hosts:
        np = sum(s for _, s in hosts)
    elif np is None:
        np = ppn or default_np(cluster)
    _check_slots(np, hosts, own, cluster, at, words, kind)
    notes = []
    if hosts:
        # The hostfile's slots say how many ranks a host takes; this machine's cores we know.
        slots, here = sum(s for _, s in hosts), hostfiles.ranks_here(hosts, np)
        oversubscribe = np > slots or here > local_cpus()
        if oversubscribe:
            notes.append(
                f"the hostfile puts {np} ranks on {slots} slots"
                + (f" ({here} on this machine's {local_cpus()} CPUs)" if here else "")
                + ": mpiscope binds no rank; binding is left to the hostfile, the "
                "launcher's defaults and --launcher-args"
            )
    else:
        # On an emulated cluster its launcher decides (it knows the slots); under
        # srun or across -N nodes, the allocation does.
        oversubscribe = not cluster and at.launcher == "mpirun" and not nodes and np > local_cpus()
    return {
        "np": np,
        "nodes": nodes,
        "ppn": ppn,
        "hosts": hosts,
        "launcher_args": words,
        "hostfile": Path(at.hostfile) if at.hostfile else None,
        "oversubscribe": oversubscribe,
        "notes": notes,
    }


def _check_slots(np, hosts, own, cluster, at, words, kind):
    """Refuses a rank count far beyond the slots known here (RANKS_PER_SLOT
    each): the hostfile's, else this machine's CPUs; an emulated cluster
    takes one rank a slot (cluster/launching.py usable). Under
    srun or -N the allocation decides, and launcher words that place ranks
    (--host, --map-by…) are the user's own placement."""
    if hosts or own:
        slots, where = sum(s for _, s in (hosts or own[0])), "the hostfile lists"
        fix = "list more hosts or slots in the hostfile"
    elif cluster:
        from mpiscope.cluster.launching import usable

        usable(cluster, np)  # one rank a slot, its delay program running: checked before the run
        return
    elif at.launcher == "mpirun" and not at.nodes and not launch.gives(words, kind.mapping_options):
        slots, where = local_cpus(), "this machine has"
        fix = (
            "give a --hostfile with the hosts and slots to use, or place the ranks with "
            '--launcher-args (e.g. "--host a:8,b:8")'
        )
    else:
        return
    if np > RANKS_PER_SLOT * slots:
        raise UsageError(
            f"-n {np} is more than {RANKS_PER_SLOT} ranks a slot: {where} {slots} "
            f"slot(s) (at most {RANKS_PER_SLOT * slots} ranks); {fix}"
        )


def launcher_words(at):
    """--launcher-args of the LaunchRequest `at`, split as a shell would (no shell runs them)."""
    text = at.launcher_args or ""
    try:
        return shlex.split(text)
    except ValueError as e:
        raise UsageError(f"--launcher-args: {e} in '{text}'; quote it as a shell would") from None


def _ranks_per_node(np, nodes, ppn):
    """--ppn, or with -N alone: -n split evenly over the nodes, or one a node."""
    if nodes and not ppn:
        if np is not None and np % nodes:
            raise UsageError(
                f"-n {np} ranks do not split evenly over -N {nodes} nodes; give --ppn or a multiple of {nodes}"
            )
        ppn = np // nodes if np is not None else 1
    if nodes and np is not None and np != nodes * ppn:
        raise UsageError(f"-n {np} is not -N {nodes} nodes x --ppn {ppn}; drop -n or change it")
    return ppn


def _hosts(hostfile, nodes, ppn):
    """The hostfile's (host, slots) as used: its first `nodes` hosts, `ppn` slots each."""
    if not hostfile:
        return None
    return hostfiles.select(hostfiles.read(hostfile), nodes, ppn)
