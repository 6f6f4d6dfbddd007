# SPDX-License-Identifier: BSD-3-Clause
"""Intel MPI (2021): identified by its own wrappers, which need I_MPI_ROOT,
and launched as MPICH is (Hydra): that code is MPICH's. Tuned through its
algorithm presets: presets.py (the presets offered, read through
MPI_T), adjust.py (the I_MPI_ADJUST_<OP> settings), tuning.py
(its JSON tuning file, for several communicator sizes), calls.py
(what a call runs, under gdb: how the default is matched to a preset and
the settings proven in effect)."""

from __future__ import annotations

import shutil
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.intelmpi import adjust, calls, presets, tuning
from mpiscope.mpilibs.algorithm_catalog import DEFAULT
from mpiscope.mpilibs.mpich import Mpich
from mpiscope.mpilibs.selection import SelectionFile

# Intel MPI's wrappers hold this text until I_MPI_ROOT names the installation.
UNSET = "I_MPI_SUBSTITUTE_INSTALLDIR"
FILES = {"intelmpi": "impi-adjust.env", "intelmpi-tuning": "impi-tuning.json"}


class IntelMpi(Mpich):
    key = "intelmpi"
    launcher_family = "mpich"
    title = "Intel MPI"
    implementations = ("intel-mpi",)
    debian_wrapper = apt_packages = None
    path_families = ()
    model_names = {}
    keeps_default = False
    forces_alone = True
    # Its ranks poll for messages; sharing cores they must wait in the kernel
    # instead, and unpinned (the pinning would put two on one core).
    oversubscribed_settings = {"I_MPI_WAIT_MODE": "1", "I_MPI_PIN": "0"}

    def check_wrapper(self, wrapper, show):
        if UNSET in show:
            root = Path(wrapper).resolve().parent.parent
            raise UsageError(
                f"the Intel MPI wrapper {wrapper} does not know its installation; "
                f"export I_MPI_ROOT={root} (what Intel's vars.sh or its conda "
                f"activation does)"
            )

    def recognizes(self, library_text):
        return "Intel(R) MPI" in library_text

    def path_family(self, library_text):
        return None

    # ---------------------------------------------------------------- tuning

    def read_catalog(self, mpi, build_probe):
        """The presets, read through MPI_T. Refused without gdb: only under it
        can the tuner tell which preset the default runs, and a collective
        given rules must name one at every size (adjust.py)."""
        if not calls.available(mpi):
            missing = [n for n in ("gdb", "nm") if shutil.which(n) is None] or ["its launcher"]
            raise UsageError(
                f"mpiscope tune needs {' and '.join(missing)} for Intel MPI: it reads "
                f"under gdb which preset the library's default runs (install gdb and "
                f"binutils)"
            )
        return presets.catalog(mpi, build_probe("cvars"))

    def forcing(self, catalog, forced):
        """I_MPI_ADJUST_<OP>=<preset>, at every size; nothing for the default."""
        return {presets.variable(c): a.value for c, a in forced.items() if a is not None}

    def forcing_beside(self, catalog, forced, settings):
        """The tuned settings with each forced collective's variable replaced
        (a variable wins over the tuning file), or removed for its default."""
        out = {k: v for k, v in settings.items() if k not in {presets.variable(c) for c in forced}}
        return {**out, **self.forcing(catalog, forced)}

    def selection_size(self, coll, nbytes, p):
        return nbytes

    def size_meaning(self, coll):
        return (
            "type size × count (one rank's buffer; one block of the gather, scatter and "
            "all-to-all family and reduce_scatter_block)"
        )

    def selection_files(self, catalog, table):
        """The I_MPI_ADJUST_<OP> settings for one communicator size, the JSON
        tuning file for several (one variable cannot hold them)."""
        if len({p for by_p in table.values() for p in by_p}) <= 1:
            key, fmt = "intelmpi", adjust
        else:
            key, fmt = "intelmpi-tuning", tuning
        text = fmt.write(table, catalog)
        parsed = fmt.read(text, catalog, FILES[key])
        yield SelectionFile(
            key,
            FILES[key],
            text,
            "our reader",
            lambda c, p, size: fmt.selects(parsed, c, p, size),
            lambda c, name: None if name == DEFAULT else name,
        )

    def use_settings(self, catalog, written, table):
        """The variables of the settings file as written, or I_MPI_TUNING
        naming the tuning file."""
        if "intelmpi" in written:
            return _variables(written["intelmpi"].read_text())
        return {"I_MPI_TUNING": str(written["intelmpi-tuning"].absolute())}

    def reads_under_gdb(self, mpi):
        return calls.available(mpi)

    def entered(self, mpi, probe, np, cells, settings, colls):
        return calls.entered(mpi, probe, np, cells, settings, self.oversubscribed_settings)

    def read_defaults(self, mpi, probe, catalog, np, cells, names, settings_of, say=print):
        return calls.read_cells(mpi, probe, catalog, np, cells, names, settings_of, self.oversubscribed_settings, say)


def _variables(text: str) -> dict:
    """{variable: value} of a settings file adjust.write wrote."""
    return {m.group(1): m.group(2) for m in map(adjust.LINE_RE.match, text.splitlines()) if m}


LIBRARY = IntelMpi()
