# SPDX-License-Identifier: BSD-3-Clause
"""What Open MPI's default runs at each cell, from the readings' text alone
(mpilibs/openmpi/defaults.py, tune/readings.py): the dispatcher's output
parsed, which numbers an exact reading needs, traces kept in order, and an
algorithm whose first function only calls another's runs that one."""

from mpiscope.mpilibs.openmpi import defaults as ompi_defaults
from mpiscope.mpilibs.algorithm_catalog import DEFAULT
from mpiscope.tune import readings


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
