# SPDX-License-Identifier: BSD-3-Clause
"""What Open MPI's default runs at each cell, read under gdb from its tuned
component's dispatcher on the real library (mpilibs/openmpi/defaults.py,
tune/readings.py), checked against the other debugger reading (which
algorithm function a call enters, mpilibs/openmpi/calls.py)."""

import shutil

import pytest

from mpiscope import mpilibs
from mpiscope.engine.build import REPO
from mpiscope.engine.mpi import identify
from mpiscope.mpilibs.openmpi import calls as ompi_calls
from mpiscope.tune import probes, readings
from mpiscope.tune.discover import discover
from mpiscope.tune.tuner import usable

WRAPPERS = {"openmpi-4.1": "/usr/bin/mpicc.openmpi",
            "openmpi-5.0": str(REPO / "build" / "mpi-envs" / "openmpi5" / "bin" / "mpicc")}


@pytest.mark.parametrize("library", WRAPPERS)
def test_what_the_default_runs_is_the_function_it_enters(library):
    """On 4 local ranks: every cell is read, each names an algorithm of the
    catalog, and the default enters the very ompi_coll_base function that
    forcing the algorithm read enters (ompi_calls, a breakpoint one level
    down). Nothing here names what Open MPI chooses: that is its business.
    (Open MPI 5's han, above tuned, is left out as the tune leaves it out.)"""
    assert shutil.which("gdb"), "gdb missing (make setup installs it)"
    mpi = identify(WRAPPERS[library])
    cat = discover(mpi)
    lib = mpilibs.of(mpi)
    assert lib.reads_under_gdb(mpi)
    probe = probes.build(mpi, "collcall")

    def mca(forced):
        return lib.forcing(cat, forced)

    colls = ["allreduce", "bcast"]
    cells = [(c, s) for c in colls for s in (8, 4096, 65536)]
    got = lib.read_defaults(mpi, probe, cat, 4, cells, {c: usable(cat, c, 4) for c in colls}, mca,
                            say=lambda *_: None)
    runs = got.default_runs
    assert set(runs) == set(cells)
    assert all(name in cat.names(c) for (c, _), (name, _) in runs.items())
    assert any(exact for _, exact in runs.values())
    # Open MPI's segmented ring with no segment size is its ring (coll_base_allreduce.c:
    # count < size * segcount, segcount = count), in 4.1 and 5.0: read as such at every size
    # (as the ring itself, or as the default where that runs the ring)
    reps = readings.representatives(runs, got.runs_as)
    assert all(readings.same_code(reps, "allreduce", s, "segmented_ring", "ring")
               and ("allreduce", s, "segmented_ring") in got.runs_as for s in (8, 4096, 65536))
    entered = ompi_calls.entered(mpi, probe, 4, cells, mca({c: None for c in colls}), colls)
    names = {c: sorted({n for (cc, _), (n, _) in runs.items() if cc == c}) for c in colls}
    forced = {}
    for k in range(max(map(len, names.values()))):   # one launch forces each collective's k-th
        force = {c: cat.find(c, ns[k]) for c, ns in names.items() if k < len(ns)}
        sub = [cell for cell, (n, _) in runs.items() if cell[0] in force and force[cell[0]].name == n]
        forced.update(ompi_calls.entered(mpi, probe, 4, sub, mca(force), colls))
    assert set(forced) == set(cells)
    for cell, (name, _) in runs.items():
        assert entered[cell] == forced[cell], (cell, name)
