# SPDX-License-Identifier: BSD-3-Clause
"""The real applications of bench/app_loop.py with its inputs, profiled at 2
ranks on this machine (the bench runs them on 4 emulated hosts): LAMMPS
(Open MPI) with tests/data/in.lj-rdf sums its radial distribution function
with one MPI_Allreduce of 8 x bins bytes a step on all ranks; MOCASSIN
(MPICH) with tests/data/mocassin/ runs its iterations and sums its grids
with MPI_Allreduce on all ranks, its traced pattern (collectives alone)
ready for the what-if. Asserted: what the bench relies on, never the
applications' times. Run under `flock /tmp/mpiscope-mpi.lock`."""

import json
import shutil
from pathlib import Path

import pytest

from mpiscope.app.profile_cells import profile_times
from mpiscope.app.trace_pattern import traced_pattern
from runcli import mpiscope

DATA = Path(__file__).resolve().parents[1] / "data"
HII40 = Path("/usr/share/mocassin/benchmarks/gas/HII40/abunHII40.in")
OMPI = ["mpirun.openmpi", "-n", "2", "--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]


def _profile(out, cwd, *command, mpi):
    p = mpiscope("profile", "--out", out, "--mpi", mpi, "--trace", "--json", "--", *command, cwd=cwd, timeout=600)
    assert p.returncode == 0, f"exit {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    return out / json.loads(p.stdout)["run_id"]


@pytest.mark.skipif(shutil.which("lmp") is None, reason="LAMMPS is not installed (scripts/setup-system.sh)")
def test_lammps_rdf_sums_its_histogram_every_step(tmp_path):
    shutil.copy(DATA / "in.lj-rdf", tmp_path)
    steps, bins = 20, 1000
    run = _profile(tmp_path / "runs", tmp_path, *OMPI, "lmp", "-in", "in.lj-rdf", "-var", "x", "0.5", "-var", "y",
                   "0.5", "-var", "z", "0.5", "-var", "steps", steps, "-var", "bins", bins, "-log", "none",
                   "-screen", "none", mpi="openmpi")
    cells = [c for c in profile_times(run).cells if c.collective == "allreduce" and c.lo <= 8 * bins <= c.hi]
    assert len(cells) == 1 and cells[0].comm_size == 2 and cells[0].blocking
    assert cells[0].calls >= 2 * steps           # every step on both ranks (and the setup's own)
    assert (tmp_path / "rdf.out").is_file()


@pytest.mark.skipif(shutil.which("mocassin") is None or not HII40.is_file(),
                    reason="MOCASSIN is not installed (scripts/setup-system.sh)")
def test_mocassin_sums_its_grids_with_allreduce(tmp_path):
    (tmp_path / "input").mkdir()
    (tmp_path / "output").mkdir()
    shutil.copy(DATA / "mocassin" / "input.in", tmp_path / "input" / "input.in")
    shutil.copy(HII40, tmp_path / "input")
    run = _profile(tmp_path / "runs", tmp_path, "mpiexec.mpich", "-n", 2, "mocassin", mpi="mpich")
    prof = profile_times(run)
    reduce = [c for c in prof.cells if c.collective == "allreduce" and c.comm_size == 2]
    assert reduce and max(c.hi for c in reduce) >= 1 << 16 and all(c.blocking for c in reduce)
    assert (tmp_path / "output" / "grid0.out").is_file()
    traced = traced_pattern(run)                 # collectives alone: no point-to-point message
    assert traced.pattern.p == 2 and "MPI_Allreduce" in traced.calls
