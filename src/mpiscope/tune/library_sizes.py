# SPDX-License-Identifier: BSD-3-Clause
"""What a library means by a collective's message size, from the engine's size.

The engine's size is OSU's: bytes per rank (per block for the gather/scatter/
all-to-all family and reduce_scatter_block; reductions sum max(1, size/4)
MPI_INTs). Each library keys its rules on its own quantity (mpilibs:
selection_size; from Open MPI's coll_tuned_decision_dynamic.c, MPICH's csel.c,
Intel MPI's under gdb, tests/mpi/test_tune_intelmpi.py): type size × count for
allreduce, bcast and reduce everywhere; for the gather, scatter and all-to-all
families Open MPI multiplies by p, MPICH by p or not as its condition says
(`total_msg_size` or `avg_msg_size`), Intel MPI takes one block; barrier has none."""

from __future__ import annotations

REDUCTIONS = ("allreduce", "reduce", "reduce_scatter_block")


def data_bytes(coll: str, size: int) -> int:
    """Bytes of one rank's (one block's) data the engine passes at engine size `size`."""
    if coll == "barrier":
        return 0
    if coll in REDUCTIONS:
        return 4 * max(1, size // 4)
    return size


def library_size(library, coll: str, size: int, p: int) -> int:
    """The size the library's (an MpiLibrary's) rule lookup compares, for
    engine size `size` on p ranks."""
    return library.selection_size(coll, data_bytes(coll, size), p)


def describe(library, coll: str) -> str:
    """One phrase for the report and --json: what the library's size is."""
    return "no size" if coll == "barrier" else library.size_meaning(coll)
