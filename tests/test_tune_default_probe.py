"""What Open MPI's default runs at each cell, read under gdb from its tuned
component's dispatcher, and which forced algorithms run another's code there
(mpilibs/ompi_defaults.py, tune/readings.py): the parsing and the rules
without MPI, then on the real library, checked against the other debugger
reading (which algorithm function a call enters, mpilibs/ompi_calls.py)."""

import shutil

import pytest

from mpiscope import mpilibs
from mpiscope.engine.build import REPO
from mpiscope.engine.mpi import identify
from mpiscope.mpilibs import ompi_calls, ompi_defaults
from mpiscope.mpilibs.catalog import DEFAULT
from mpiscope.tune import probes, readings
from mpiscope.tune.discover import discover
from mpiscope.tune.tuner import usable


def test_parse_keeps_the_first_dispatch_of_the_cells_own_collective():
    cells = [("allreduce", 8), ("alltoall", 64), ("bcast", 1024)]
    text = "\n".join(["@this 1 reduce 2 0 0 7",        # an algorithm calling another collective
                      "@this 1 allreduce 3 0 0 99",    # the fourth number: not do_this's here
                      "@this 1 allreduce 4 0 0 0",
                      "@this 2 alltoall 4 0 0 5",      # alltoall's do_this takes max_requests
                      "noise", "@this 9 bcast 1 0 0 0"])
    assert ompi_defaults.parse(text, cells) == {("allreduce", 8): (3, 0, 0, None),
                                                ("alltoall", 64): (4, 0, 0, 5)}


def test_exact_needs_every_number_but_a_fan_out_the_algorithm_never_gets():
    default = {("bcast", 8): (6, 0, 0, None), ("bcast", 16): (2, 0, 0, None),
               ("bcast", 32): (6, 0, 1024, None), ("alltoall", 8): (4, 0, 0, 0),
               ("alltoall", 16): (4, 0, 0, 8)}
    forced = {("bcast", 8): ("binomial", (6, 4, 0, None)),
              ("bcast", 16): ("chain", (2, 4, 0, None)),        # chain gets the fan-out
              ("bcast", 32): ("binomial", (6, 4, 0, None)),     # another segment size
              ("alltoall", 8): ("linear_sync", (4, 4, 0, 0)),
              ("alltoall", 16): ("linear_sync", (4, 4, 0, 0))}  # another max_requests
    assert ompi_defaults.same_cells(default, forced) == {
        ("bcast", 8): ("binomial", True), ("bcast", 16): ("chain", False),
        ("bcast", 32): ("binomial", False), ("alltoall", 8): ("linear_sync", True),
        ("alltoall", 16): ("linear_sync", False)}


def test_traces_keep_each_cells_events_in_order():
    cells = [("allreduce", 8), ("bcast", 64)]
    text = "\n".join(["@ev 1 enter allreduce_intra_ring", "@ev 1 enter allreduce_intra_recursivedoubling",
                      "@ev 2 enter bcast_intra_binomial", "@ev 1 isend 2 1 -12", "@ev 1 wait",
                      "@ev 7 isend 1 1 1", "@this 1 allreduce 4 0 0 0"])
    assert ompi_defaults.traces(text, cells) == {
        ("allreduce", 8): ("enter allreduce_intra_ring", "enter allreduce_intra_recursivedoubling",
                           "isend 2 1 -12", "wait"),
        ("bcast", 64): ("enter bcast_intra_binomial",)}


RD = ("enter allreduce_intra_recursivedoubling", "isend 2 1 -12", "irecv 2 1 -12", "wait_all 2")
RING = ("enter allreduce_intra_ring", "isend 1 1 -12", "irecv 1 3 -12", "wait_all 2")


def test_an_algorithm_whose_first_function_only_calls_anothers_runs_that_one():
    """segmented_ring -> ring -> recursive doubling at 8 B (the default runs
    that), segmented_ring -> ring at 4 KiB; an algorithm that sends before
    calling another, or calls one with other arguments, runs its own."""
    cell, big = ("allreduce", 8), ("allreduce", 4096)
    traced = {
        DEFAULT: {cell: RD, big: RD},
        "recursive_doubling": {cell: RD, big: RD},
        "ring": {cell: ("enter allreduce_intra_ring",) + RD, big: RING},
        "segmented_ring": {cell: ("enter allreduce_intra_ring_segmented",
                                  "enter allreduce_intra_ring") + RD,
                           big: ("enter allreduce_intra_ring_segmented",) + RING},
        "sends_first": {cell: ("enter allreduce_intra_x", "isend 8 1 -12") + RD[1:],
                        big: ("enter allreduce_intra_x",) + RD[:1] + ("isend 9 1 -12",)}}
    runs_as = ompi_defaults.delegations(traced)
    assert runs_as == {("allreduce", 8, "ring"): DEFAULT,
                       ("allreduce", 8, "segmented_ring"): "ring",
                       ("allreduce", 4096, "segmented_ring"): "ring"}
    default_runs = {cell: ("recursive_doubling", True), big: ("recursive_doubling", True)}
    reps = readings.representatives(default_runs, runs_as)
    assert reps == {("allreduce", 8, "ring"): DEFAULT, ("allreduce", 8, "segmented_ring"): DEFAULT,
                    ("allreduce", 4096, "segmented_ring"): "ring",
                    ("allreduce", 8, "recursive_doubling"): DEFAULT,
                    ("allreduce", 4096, "recursive_doubling"): DEFAULT}
    assert readings.same_code(reps, "allreduce", 4096, "ring", "segmented_ring")
    assert readings.same_code(reps, "allreduce", 8, "segmented_ring", DEFAULT)
    assert not readings.same_code(reps, "allreduce", 4096, "ring", DEFAULT)
    # not exact (another segment size, say): the ring's fall-back is recursive
    # doubling's code, not the default's
    reps = readings.representatives({cell: ("recursive_doubling", False)}, runs_as)
    assert reps[("allreduce", 8, "segmented_ring")] == DEFAULT   # ring -> the default's trace


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

    colls = ["allreduce", "bcast", "alltoall"]
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
