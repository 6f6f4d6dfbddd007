# SPDX-License-Identifier: BSD-3-Clause
"""What a run asks for, as immutable values: where and how its ranks start
(LaunchRequest) and what it measures (MeasureRequest). The command line
builds them (cli/run_options.py), so does a notebook (mpiscope.api);
make_plan (plan.py) checks them and turns them into a Plan.

Lists keep the text an option takes ("pingpong,bw", "8,1K,1M", "1-4M:x2"),
so that a request reads as the command it stands for and is refused with
the same words."""

from __future__ import annotations

import dataclasses

from mpiscope.engine.mpi import Installation, find_mpi
from mpiscope.store.layout import DEFAULT_OUT


@dataclasses.dataclass(frozen=True)
class LaunchRequest:
    """Which MPI, how many ranks, where, and with which launcher."""

    np: int | None = None  # -n; None: from --nodes x --ppn, the hostfile, or the CPUs
    mpi: str | None = None  # --mpi: an mpilibs key with a Debian wrapper
    mpicc: str | None = None  # --mpicc: any MPI's compiler wrapper
    installation: Installation | None = None  # an identified MPI: used as is, never looked up again
    launcher: str | None = None  # mpirun or srun; None: mpirun, not asked for
    mpirun: str | None = None  # the launcher program, else the MPI's own
    hostfile: str | None = None
    nodes: int | None = None
    ppn: int | None = None
    launcher_args: str | None = None  # words for the launcher, split as a shell would
    cluster: str | None = None  # an emulated cluster's name

    def find_installation(self) -> Installation:
        """The MPI asked for: the one identified already, else the one --mpicc,
        --mpi or the defaults choose (engine/mpi.py)."""
        return self.installation or find_mpi(mpicc=self.mpicc, mpi=self.mpi)


@dataclasses.dataclass(frozen=True)
class MeasureRequest:
    """What `mpiscope run` measures and how it stops; the defaults are the command's."""

    launch: LaunchRequest = LaunchRequest()
    out: str = DEFAULT_OUT
    suite: str = "quick"
    bench: str | None = None  # comma list; None: the suite's
    exclude: str | None = None
    sizes: str | None = None  # 8,1K,1M or ranges; None: the suite's
    pairs: str | None = None  # the pairs file of the 'pairs' benchmark
    sync: str | None = None  # None: auto
    start_barrier: str = "mpi"
    timer: str = "tsc"
    clock_sync: str = "auto"
    cache: str = "warm"
    huge_pages: bool = False
    reps_min: int = 10
    reps_max: int = 100000
    ci_width: float = 0.02
    time_budget: float = 1.0
    warmup: int = 5
    launches: int = 1
    check: bool = False
    root_rotate: bool = False
    clock_inject: str | None = None
    refine: bool = False
    refine_threshold: float = 0.1
    refine_max: int = 8
    label: str | None = None
    seed: int = 1
    queue_depths: str | None = None  # LogGP (loggp_options.py)
    overhead_steps: str | None = None
    flood_bytes: str | None = None
    algo: str | None = None  # our own collective algorithms (algo_options.py)
    segment: str | None = None
    trace: bool = False
    methods: str | None = None  # the peers' methods (method_options.py)
