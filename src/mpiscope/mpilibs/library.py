# SPDX-License-Identifier: BSD-3-Clause
"""The interface every MPI library module implements: what mpiscope does
differently for one library family. The rest of the code asks the library
(mpilibs.get(key), mpilibs.of(mpi)) and never compares its name.

A library that mpiscope launches but does not tune leaves the tuning
methods as they are here: each refuses with a UsageError, before anything
is built or launched."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Iterator

from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.algorithm_catalog import Catalog
from mpiscope.mpilibs.launcher import Launcher
from mpiscope.mpilibs.selection import SelectionFile


@dataclass
class Reading:
    """What the library's default runs, read from the library: {(coll,
    size): (the algorithm it runs, whether exactly as forcing it runs it)},
    and {(coll, size, name): the configuration forcing name runs there, when
    another's}."""

    default_runs: dict
    runs_as: dict


class MpiLibrary(ABC):
    # ---------------------------------------------------------------- identity
    key: str  # registry key: --mpi KEY, a catalog's library
    title: str  # as users know it: "Open MPI"
    implementations: tuple  # what native/engine/probe/mpi_identity.c reports for it
    launcher_family: str  # the key of the library it is launched as (its own, or MPICH's)
    launcher_programs: tuple  # looked for beside the wrapper, in this order
    default_launcher: str  # run when none is beside the wrapper and no --mpirun is given
    debian_wrapper: str | None = None  # Debian's compiler wrapper, chosen by --mpi KEY
    apt_packages: str | None = None  # the Debian packages that install it

    def check_wrapper(self, wrapper: str, show: str) -> None:
        """Refuses (UsageError, saying what to do) a wrapper of this library
        whose compile line `show` cannot build yet; passes any other."""

    @abstractmethod
    def recognizes(self, library_text: str) -> bool:
        """Whether MPI_Get_library_version's text is this library's."""

    # ---------------------------------------------------------------- launching
    launcher: Launcher  # its own launcher program (mpirun, Hydra's mpiexec)
    srun_plugin: str  # Slurm's --mpi plugin for its wire-up
    root_env: dict = {}  # what its launcher needs to start ranks as root
    launcher_preloads: bool = False  # its cluster launch hands LD_PRELOAD to the ranks alone
    # Settings (as settings_words takes them) that let its ranks share cores:
    # added to a launch with more ranks than CPUs by its family's launcher,
    # which does not know which of the libraries launched as it runs.
    oversubscribed_settings: dict = {}

    @abstractmethod
    def settings_words(self, settings: dict) -> list:
        """Launcher words giving every rank `settings` (its parameters or
        variables, name -> value)."""

    @abstractmethod
    def settings_env(self, settings: dict) -> dict:
        """The same settings as environment variables (a job script's)."""

    @abstractmethod
    def cluster_command(
        self, *, np: int, hostfile, rsh: str, oversubscribed: bool, interface: str, preload=(), yield_library=None
    ) -> tuple:
        """(launcher words, environment to add) starting np ranks across an
        emulated cluster from its first host: `hostfile` in the launcher's
        form, `rsh` the program that stands in for ssh, `interface` the
        hosts' link, `preload` libraries the ranks load (only where
        launcher_preloads), `yield_library()` the path of
        native/cluster/yield_when_idle.c, for a library whose ranks cannot be told
        to yield their core."""

    # ---------------------------------------------------------------- the profiler
    monitoring: bool = False  # counts what it sent itself (`mpiscope profile --library-view`)

    def pass_to_ranks(self, env: dict, variables: dict, program: str | None) -> None:
        """Puts `variables` (LD_PRELOAD and the profiler's) where the ranks of
        a launch by `program` (None: the library's own launcher) get them;
        here: the launcher's environment, which launchers pass on."""
        env.update(variables)

    # ---------------------------------------------------------------- the transport lab
    path_families: tuple = ()  # its intra-node path families (mpilibs/intranode.py)

    def path_family(self, library_text: str) -> str | None:
        """The name of its path family a library of this MPI_Get_library_version
        text uses (the settings that choose the path differ by it); None: not
        one the lab knows."""
        return None

    def env_words(self, variables: dict) -> list:
        """Launcher words giving every rank the environment `variables`."""
        return [w for k, v in variables.items() for w in ("-genv", k, v)]

    # ---------------------------------------------------------------- tuning
    def read_catalog(self, mpi, build_probe) -> Catalog:
        """The algorithms it offers per collective, read from the library of
        `mpi`; `build_probe(target)` builds one of native/engine/probe's programs
        with its wrapper and returns its path."""
        raise self._untuned()

    def runs_on(self, coll: str, name: str, p: int) -> bool:
        """Whether forcing algorithm `name` of `coll` can run on p ranks."""
        return True

    # Whether forcing one collective's algorithm changes what another's runs
    # (Intel MPI: a preset composed of other collectives follows their
    # settings): then a launch forces one collective only.
    forces_alone: bool = False

    def forcing(self, catalog: Catalog, forced: dict) -> dict:
        """The settings of a launch forcing {collective: Algorithm, or None
        for its default} (and nothing else changing what runs)."""
        raise self._untuned()

    def forcing_beside(self, catalog: Catalog, forced: dict, settings: dict) -> dict:
        """The settings of a launch forcing `forced` as `forcing` does, where
        the other collectives run as the tuned `settings` make them (which
        matters where forces_alone); here forcing's alone."""
        return self.forcing(catalog, forced)

    # Its algorithm names that are one of our cost models (models/costmodels/),
    # which the adaptive search fits and the report's predicted change-overs use.
    model_names: dict = {}
    # Whether its files can keep the library's own choice at some sizes of a
    # collective they give rules for. Where they cannot (Intel MPI), the
    # tuner writes there the algorithm the default was read to run, and a
    # collective where that is not known keeps the library's choice throughout.
    keeps_default: bool = True

    def selection_size(self, coll: str, nbytes: int, p: int) -> int:
        """The size its selection compares for a call passing `nbytes` of
        data per rank (per block) on p ranks."""
        raise self._untuned()

    def size_meaning(self, coll: str) -> str:
        """One phrase: what that size is."""
        raise self._untuned()

    def selection_files(self, catalog: Catalog, table: dict) -> Iterator[SelectionFile]:
        """The files holding `table` {collective: {p: [Rule]}}, each read back
        by our own reader, which refuses what the library would not read."""
        raise self._untuned()

    def use_settings(self, catalog: Catalog, written: dict, table: dict) -> dict:
        """The settings with which a job uses the files `written` {key: path}."""
        raise self._untuned()

    def reads_under_gdb(self, mpi) -> bool:
        """Whether a debugger can tell which of its algorithms a call runs
        (entered, read_defaults); otherwise its use of a file is judged by
        time alone."""
        return False

    def entered(self, mpi, probe, np: int, cells: list, settings: dict, colls: list) -> dict:
        """{(coll, size): the algorithm function a call enters} on np ranks
        with `settings`; `probe`: native/engine/probe/coll_call.c built for `mpi`."""
        raise self._untuned()

    def read_defaults(
        self, mpi, probe, catalog: Catalog, np: int, cells: list, names: dict, settings_of, say=print
    ) -> Reading:
        """What its default runs at `cells`, and which of `names` {coll:
        [name]} run another's code there; `settings_of(forced)` as forcing."""
        raise self._untuned()

    def selected_defaults(self, mpi, build_probe, catalog: Catalog, per_node: list, cells: list) -> Reading | None:
        """What its default runs at `cells` [(coll, size)], told from its own
        selection tree without a launch, the ranks placed `per_node` (ranks on
        each node, in rank order); `build_probe` as read_catalog takes it.
        None where it cannot be told so."""
        return None

    def _untuned(self) -> UsageError:
        return UsageError(
            f"mpiscope tune does not support {self.title} yet; give the compiler "
            f"wrapper of a library it tunes with --mpicc (docs/explanation/tuner.md)"
        )
