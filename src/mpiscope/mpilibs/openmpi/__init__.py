# SPDX-License-Identifier: BSD-3-Clause
"""Open MPI: identified, launched, forced, tuned and checked as 4.1 and 5.0
do it (and 6's JSON rules). Its parts: mpirun.py (the launcher),
ompi_info.py (the algorithms offered), rules.py (the rules files),
calls.py and defaults.py (what a call runs, seen under gdb)."""

from __future__ import annotations

import re
from pathlib import Path

from mpiscope.mpilibs.openmpi import calls, defaults, ompi_info, rules
from mpiscope.mpilibs.algorithm_catalog import DEFAULT
from mpiscope.mpilibs.library import MpiLibrary
from mpiscope.mpilibs.openmpi.mpirun import Mpirun
from mpiscope.mpilibs.openmpi.paths import SM, VADER
from mpiscope.mpilibs.selection import SelectionFile

# The rules files compare type size × count × p for these (coll_tuned_decision_dynamic.c).
TIMES_P = ("allgather", "alltoall", "gather", "scatter", "reduce_scatter_block")
FILES = {"openmpi": "ompi-rules.conf", "openmpi-json": "ompi-rules.json"}
# mpirun's names: a launch by one of them gets the profiler's variables through mpirun.
OWN_LAUNCHERS = ("mpirun", "mpiexec", "orterun", "oshrun")


class OpenMpi(MpiLibrary):
    key = launcher_family = "openmpi"
    title = "Open MPI"
    implementations = ("open-mpi",)
    launcher_programs = ("mpirun", "mpiexec")
    default_launcher = "mpirun.openmpi"
    debian_wrapper = "mpicc.openmpi"
    apt_packages = "openmpi-bin libopenmpi-dev"
    launcher = Mpirun()
    srun_plugin = "pmix"
    root_env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    monitoring = True

    def recognizes(self, library_text):
        return "Open MPI" in library_text

    path_families = (VADER, SM)

    def path_family(self, library_text):
        m = re.search(r"v(\d+)", library_text)
        return (SM if m and int(m.group(1)) >= 5 else VADER).name

    def env_words(self, variables):
        return [w for k, v in variables.items() for w in ("-x", f"{k}={v}")]

    def settings_words(self, settings):
        return [w for k, v in settings.items() for w in ("--mca", k, v)]

    def settings_env(self, settings):
        return {f"OMPI_MCA_{k}": v for k, v in settings.items()}

    def cluster_command(self, *, np, hostfile, rsh, oversubscribed, interface, preload=(), yield_library=None):
        """TCP on the hosts' interface, the daemons started through rsh; with
        more ranks than cores, idle ranks give their core away."""
        if preload:
            raise ValueError("preload is for MPICH; Open MPI ranks get LD_PRELOAD from the environment")
        cmd = [
            self.default_launcher,
            "-n",
            str(np),
            "--hostfile",
            str(hostfile),
            "--map-by",
            "slot",
            "--bind-to",
            "none",
            "--mca",
            "plm_rsh_agent",
            rsh,
            "--mca",
            "plm_rsh_no_tree_spawn",
            "1",
            "--mca",
            "btl",
            "tcp,self",
            "--mca",
            "btl_tcp_if_include",
            interface,
            "--mca",
            "oob_tcp_if_include",
            interface,
        ]
        if oversubscribed:
            # More ranks than real cores: without yielding, TCP latency becomes milliseconds.
            cmd += ["--mca", "mpi_yield_when_idle", "1"]
        return cmd, dict(self.root_env)

    def pass_to_ranks(self, env, variables, program):
        """mpirun forwards mca_base_env_list to every rank, also on other hosts,
        and the launcher itself does not load the library."""
        if program is not None and Path(program).name.split(".")[0] not in OWN_LAUNCHERS:
            return super().pass_to_ranks(env, variables, program)
        forwarded = ";".join(f"{k}={v}" for k, v in variables.items())
        old = env.get("OMPI_MCA_mca_base_env_list")
        env["OMPI_MCA_mca_base_env_list"] = f"{old};{forwarded}" if old else forwarded

    # ---------------------------------------------------------------- tuning

    model_names = {
        "basic_linear": "linear",
        "linear": "linear",
        "binomial": "binomial",
        "recursive_doubling": "recursive_doubling",
        "ring": "ring",
        "rabenseifner": "rabenseifner",
        "bruck": "bruck",
        "modified_bruck": "bruck",
        "pairwise": "pairwise",
        "recursive_halving": "recursive_halving",
        "scatter_allgather": "scatter_allgather_recursive_doubling",
        "scatter_allgather_ring": "scatter_allgather_ring",
    }

    def read_catalog(self, mpi, build_probe):
        return ompi_info.catalog(
            ompi_info.ompi_info_text(mpi, "tuned"), ompi_info.ompi_info_text(mpi, "all"), mpi.version
        )

    def runs_on(self, coll, name, p):
        return "two_proc" not in name or p == 2  # the two_proc ones abort on any other p

    def forcing(self, catalog, forced):
        """coll_tuned_<coll>_algorithm; the components above tuned (5.0's han) left out."""
        params = {}
        for coll, alg in forced.items():
            if alg is not None:
                params.update({"coll_tuned_use_dynamic_rules": "1", f"coll_tuned_{coll}_algorithm": alg.value})
        if catalog.excluded_components:
            params["coll"] = "^" + ",".join(catalog.excluded_components)
        return params

    def selection_size(self, coll, nbytes, p):
        return nbytes * p if coll in TIMES_P else nbytes

    def size_meaning(self, coll):
        return "type size × count × p" if coll in TIMES_P else "type size × count"

    def selection_files(self, catalog, table):
        text = rules.write_classic(table, catalog)
        parsed = rules.read_classic(text, catalog, FILES["openmpi"])
        yield SelectionFile(
            "openmpi",
            FILES["openmpi"],
            text,
            "our reader",
            lambda c, p, size: rules.classic_selects(parsed, c, p, size),
            lambda c, name: rules.number(catalog, c, name),
        )
        # Open MPI 6/main also reads JSON rules; 5.0 does not: its
        # coll_tuned_dynamic_file.c (branch v5.0.x) reads the classic format
        # alone (an optional rule-file-version line first), and its library
        # holds no JSON reader.
        if int(catalog.version.split(".")[0]) >= 6:
            doc = rules.write_json(table, catalog)
            jparsed = rules.read_json(doc, catalog)
            yield SelectionFile(
                "openmpi-json",
                FILES["openmpi-json"],
                doc,
                "our JSON reader",
                lambda c, p, size: rules.json_selects(jparsed, c, p, size),
                lambda c, name: "ignore" if name == DEFAULT else name,
            )

    def use_settings(self, catalog, written, table):
        params = {
            "coll_tuned_use_dynamic_rules": "1",
            "coll_tuned_dynamic_rules_filename": str(written["openmpi"].absolute()),
        }
        if catalog.excluded_components:
            params["coll"] = "^" + ",".join(catalog.excluded_components)
        return params

    def reads_under_gdb(self, mpi):
        return calls.available(mpi)

    def entered(self, mpi, probe, np, cells, settings, colls):
        return calls.entered(mpi, probe, np, cells, settings, colls)

    def read_defaults(self, mpi, probe, catalog, np, cells, names, settings_of, say=print):
        return defaults.read_cells(mpi, probe, catalog, np, cells, names, settings_of, say)


LIBRARY = OpenMpi()
