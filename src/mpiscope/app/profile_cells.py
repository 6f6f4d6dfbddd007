# SPDX-License-Identifier: BSD-3-Clause
"""A profile run's time per collective × communicator size × size bin, and
the application time it is a share of: what the prediction of an
application's speedup weighs the tune's cells by (app/speedup_prediction.py).

Times are summed over ranks (rank-seconds), so a cell's share of the
application's time is its share of every rank's time taken together."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.profile import files, summary
from mpiscope.profile.weights import collective_name
from mpiscope.common.inputs import InputError, read_json


@dataclass(frozen=True)
class ProfileCell:
    collective: str  # "allreduce" for MPI_Allreduce and MPI_Iallreduce
    blocking: bool
    comm_size: int  # -1: the profiler did not keep the communicator apart
    lo: int  # the size bin, bytes, inclusive
    hi: int
    calls: int  # summed over ranks
    time_s: float  # time inside the calls, summed over ranks


@dataclass(frozen=True)
class ProfileTimes:
    run_id: str
    np: int
    wall_s: float  # Σ over ranks of MPI_Init..MPI_Finalize
    mpi_s: float  # Σ over ranks of the time inside every MPI call
    cells: tuple

    @property
    def wall_per_rank_s(self) -> float:
        return self.wall_s / self.np if self.np else 0.0


def profile_times(run_dir) -> ProfileTimes:
    """The collective cells of the profile run in `run_dir`."""
    run_dir = Path(run_dir)
    try:
        kind = read_json(run_dir / "context.json").get("kind")
    except (InputError, AttributeError):
        kind = None
    if kind != files.KIND or not (run_dir / files.CELLS).is_file():
        raise UsageError(
            f"{run_dir} is not a completed profile run: profile the application with "
            "`mpiscope profile -- LAUNCH COMMAND…` and give its run"
        )
    prof = summary.load(run_dir)
    wall = sum(float(r["wall_s"]) for r in (prof.context.get("ranks") or {}).values())
    if wall <= 0:
        raise UsageError(f"profile run {run_dir.name} records no wall time for its ranks")
    cells = []
    for _, r in summary.collectives(prof).iterrows():
        name, blocking = collective_name(r.call)
        cells.append(
            ProfileCell(name, blocking, int(r.comm_size), int(r.lo), int(r.hi), int(r["count"]), float(r.time_s))
        )
    return ProfileTimes(
        prof.context.get("run_id", run_dir.name), prof.np, wall, float(prof.cells["time_s"].sum()), tuple(cells)
    )
