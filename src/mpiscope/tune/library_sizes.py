# SPDX-License-Identifier: BSD-3-Clause
"""What a library means by a collective's message size, from the engine's size.

The engine's size is OSU's: bytes per rank, per block for the gather/scatter/
all-to-all family and reduce_scatter_block; reductions sum MPI_INT, max(1,
size/4) of them (so 1 B is 4 B of data). The libraries key their rules on
other quantities, each library's module says which (mpilibs: selection_size;
read from their sources: Open MPI coll_tuned_decision_dynamic.c, MPICH
csel.c, the same in 4.x and 5.x; Intel MPI's measured under gdb,
tests/mpi/test_tune_intelmpi.py):

| collective | Open MPI rules file | MPICH selection JSON | Intel MPI |
|---|---|---|---|
| allreduce, bcast, reduce | type size × count | `avg_msg_size` = type size × count | type size × count |
| alltoall | type size × count × p | `avg_msg_size` = type size × count (one block) | one block |
| allgather | type size × count × p | `total_msg_size` = type size × count × p | one block |
| gather, scatter | type size × count × p | `total_msg_size` = count × p (no type size; bytes here) | one block |
| reduce_scatter_block | type size × count × p | `total_msg_size` = type size × count × p | one block |
| barrier | no size (0) | no size condition | no size condition |
"""

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
