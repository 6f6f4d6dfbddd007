"""Intel MPI (2021): identified by its own wrappers, which need I_MPI_ROOT,
and launched as MPICH is (Hydra): that code is MPICH's. Its tuning is not
written: the interface's own tuning methods, which refuse."""

from __future__ import annotations

from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.library import MpiLibrary
from mpiscope.mpilibs.mpich import Mpich

# Intel MPI's wrappers hold this text until I_MPI_ROOT names the installation.
UNSET = "I_MPI_SUBSTITUTE_INSTALLDIR"


class IntelMpi(Mpich):
    key = "intelmpi"
    family = "mpich"
    title = "Intel MPI"
    implementations = ("intel-mpi",)
    debian_wrapper = apt_packages = None

    def check_wrapper(self, wrapper, show):
        if UNSET in show:
            root = Path(wrapper).resolve().parent.parent
            raise UsageError(f"the Intel MPI wrapper {wrapper} does not know its installation; "
                             f"export I_MPI_ROOT={root} (what Intel's vars.sh or its conda "
                             f"activation does)")

    def recognizes(self, library_text):
        return "Intel(R) MPI" in library_text

    def path_family(self, library_text):
        return None

    read_catalog = MpiLibrary.read_catalog
    forcing = MpiLibrary.forcing
    selection_size = MpiLibrary.selection_size
    size_meaning = MpiLibrary.size_meaning
    selection_files = MpiLibrary.selection_files
    use_settings = MpiLibrary.use_settings


LIBRARY = IntelMpi()
