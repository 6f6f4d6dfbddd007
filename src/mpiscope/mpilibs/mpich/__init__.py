# SPDX-License-Identifier: BSD-3-Clause
"""MPICH (4.x, 5.x; on UCX as Debian builds it): identified, launched (Hydra),
forced, tuned and checked. Its parts: hydra.py (the launcher), cvars.py (the
algorithms offered), selection_json.py (the selection JSON),
default_selection.py (what its default selects). MPICH hides its algorithm
functions, so whether it uses the file is judged by time (tune/verdicts.py)."""

from __future__ import annotations

from mpiscope.mpilibs.mpich import cvars, default_selection, selection_json
from mpiscope.mpilibs.algorithm_catalog import DEFAULT
from mpiscope.mpilibs.mpich.hydra import Hydra
from mpiscope.mpilibs.library import MpiLibrary, Reading
from mpiscope.mpilibs.mpich.cvars import cvar_name, device_cvar
from mpiscope.mpilibs.mpich.paths import CH4_SHM, UCX
from mpiscope.mpilibs.selection import SelectionFile

FILES = {"mpich": "mpich-selection.json"}


class Mpich(MpiLibrary):
    key = launcher_family = "mpich"
    title = "MPICH"
    implementations = ("mpich",)
    # MPICH's launchers are mpiexec (Hydra) and mpirun, the same program.
    launcher_programs = ("mpiexec", "mpirun")
    default_launcher = "mpiexec.hydra"
    debian_wrapper = "mpicc.mpich"
    apt_packages = "mpich libmpich-dev"
    launcher = Hydra()
    srun_plugin = "pmi2"
    launcher_preloads = True

    def recognizes(self, library_text):
        return "MPICH" in library_text or "mpich" in library_text.lower()

    path_families: tuple = (UCX, CH4_SHM)

    def path_family(self, library_text):
        return (UCX if "ucx" in library_text.lower() else CH4_SHM).name

    def settings_words(self, settings):
        return [w for k, v in settings.items() for w in ("-genv", k, v)]

    def settings_env(self, settings):
        return dict(settings)

    def cluster_command(self, *, np, hostfile, rsh, oversubscribed, interface, preload=(), yield_library=None):
        """Hydra's ssh launcher through rsh, UCX restricted to TCP so that no
        shared memory crosses hosts; `preload` reaches the ranks alone (-genv)."""
        cmd = [
            self.default_launcher,
            "-launcher",
            "ssh",
            "-launcher-exec",
            rsh,
            "-f",
            str(hostfile),
            "-n",
            str(np),
            "-iface",
            interface,
            "-bind-to",
            "none",
        ]
        # MPICH (ch4:ucx) has no yield setting: a rank waiting on a peer that
        # shares its core would spin out its whole time slice for every message.
        libraries = [*preload, *([yield_library()] if oversubscribed else [])]
        if libraries:
            cmd += ["-genv", "LD_PRELOAD", ":".join(map(str, libraries))]
        return cmd, {"UCX_TLS": "tcp,self", "UCX_NET_DEVICES": interface}

    # ---------------------------------------------------------------- tuning

    model_names = {
        "binomial": "binomial",
        "recursive_doubling": "recursive_doubling",
        "ring": "ring",
        "reduce_scatter_allgather": "rabenseifner",
        "brucks": "bruck",
        "pairwise": "pairwise",
        "recursive_halving": "recursive_halving",
        "scatter_recursive_doubling_allgather": "scatter_allgather_recursive_doubling",
        "scatter_ring_allgather": "scatter_allgather_ring",
    }

    def read_catalog(self, mpi, build_probe):
        return cvars.catalog(mpi, build_probe("cvars"))

    def forcing(self, catalog, forced):
        """MPIR_CVAR_<COLL>_INTRA_ALGORITHM; the device layer's own collectives
        switched off, so that MPIR's choice is what runs."""
        env = {}
        for coll, alg in forced.items():
            env["MPIR_CVAR_DEVICE_COLLECTIVES"] = "none"
            if alg is not None:
                env[cvar_name(coll)] = alg.value
                # An algorithm that cannot serve the call must fail, not be measured under
                # the name of the one MPICH falls back to.
                env["MPIR_CVAR_COLLECTIVE_FALLBACK"] = "error"
        if not catalog.device_override:
            env.pop("MPIR_CVAR_DEVICE_COLLECTIVES", None)
        return env

    def selected_defaults(self, mpi, build_probe, catalog, per_node, cells):
        """From the library's own trees (default_selection.py), for the calls the
        tune's probes make; not exact (the tune measures each algorithm on its
        own): the default reaches the algorithm through the device layer."""
        blob = cvars.library_bytes(build_probe("cvars"))
        mpir, device = catalog.default_tree or cvars.library_default_tree(blob), cvars.library_device_tree(blob)
        if not mpir:
            return None
        comm = default_selection.Comm(tuple(per_node))
        names = {(c, a.container): a.name for c, algs in catalog.algorithms.items() for a in algs}
        runs = {}
        try:
            for c, s in cells:
                call = default_selection.engine_call(c, s, comm.size)
                got = default_selection.default_container(mpir, device, c, comm, call)
                if got is not None:
                    runs[(c, s)] = (names.get((c, got), got), False)
        except ValueError:  # a condition of another MPICH than the ones read
            return None
        return Reading(runs, {})

    def selection_size(self, coll, nbytes, p):
        return nbytes if coll in selection_json.AVG else nbytes * p

    def size_meaning(self, coll):
        per = "per rank" if coll in selection_json.AVG else "whole message"
        return f"{selection_json.size_key(coll)} ({per})"

    def selection_files(self, catalog, table):
        text = selection_json.write(table, catalog)
        tree = selection_json.read(text, catalog, FILES["mpich"])
        yield SelectionFile(
            "mpich",
            FILES["mpich"],
            text,
            "our reader",
            lambda c, p, size: selection_json.selects(tree, c, p, size),
            lambda c, name: None if name == DEFAULT else catalog.find(c, name).container,
        )

    def use_settings(self, catalog, written, table):
        """The device's own algorithms, which would override the file, are
        switched off only for the collectives `table` gives a rule naming an
        algorithm, where the per-collective switch exists; every other
        collective runs exactly as without the file."""
        params = {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": str(written["mpich"].absolute())}
        ruled = sorted(
            c for c, by_p in table.items() if any(r.algorithm != DEFAULT for rules in by_p.values() for r in rules)
        )
        if catalog.device_override and ruled:
            if set(ruled) <= catalog.device_percoll:
                params["MPIR_CVAR_DEVICE_COLLECTIVES"] = "percoll"
                params.update({device_cvar(c): "0" for c in ruled})
            else:
                params["MPIR_CVAR_DEVICE_COLLECTIVES"] = "none"
        return params


LIBRARY = Mpich()
