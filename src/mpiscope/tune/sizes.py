"""What each library means by a collective's message size, from the engine's size.

The engine's size is OSU's: bytes per rank, per block for the gather/scatter/
all-to-all family and reduce_scatter_block; reductions sum MPI_INT, max(1,
size/4) of them (so 1 B is 4 B of data). The libraries key their rules on
other quantities (read from their sources: Open MPI
coll_tuned_decision_dynamic.c, MPICH csel.c, the same in 4.x and 5.x):

| collective | Open MPI rules file | MPICH selection JSON |
|---|---|---|
| allreduce, bcast, reduce | type size × count | `avg_msg_size` = type size × count |
| alltoall | type size × count × p | `avg_msg_size` = type size × count (one block) |
| allgather | type size × count × p | `total_msg_size` = type size × count × p |
| gather, scatter | type size × count × p | `total_msg_size` = count × p (MPICH drops the type size; bytes here) |
| reduce_scatter_block | type size × count × p | `total_msg_size` = type size × count × p |
| barrier | no size (0) | no size condition |
"""

from __future__ import annotations

REDUCTIONS = ("allreduce", "reduce", "reduce_scatter_block")
# Open MPI multiplies by the communicator size for these.
OMPI_TIMES_P = ("allgather", "alltoall", "gather", "scatter", "reduce_scatter_block")
# MPICH's avg_msg_size exists for these only; the others are keyed on total_msg_size.
MPICH_AVG = ("allreduce", "bcast", "reduce", "alltoall")


def data_bytes(coll: str, size: int) -> int:
    """Bytes of one rank's (one block's) data the engine passes at engine size `size`."""
    if coll == "barrier":
        return 0
    if coll in REDUCTIONS:
        return 4 * max(1, size // 4)
    return size


def library_size(library: str, coll: str, size: int, p: int) -> int:
    """The size the library's rule lookup compares, for engine size `size` on p ranks."""
    b = data_bytes(coll, size)
    if library == "openmpi":
        return b * p if coll in OMPI_TIMES_P else b
    if library == "mpich":
        if coll == "barrier":
            return 0
        return b if coll in MPICH_AVG else b * p
    raise ValueError(f"unknown library {library}")


def mpich_key(coll: str) -> str | None:
    """The selection JSON's size condition for `coll` (None: barrier has none)."""
    if coll == "barrier":
        return None
    return "avg_msg_size" if coll in MPICH_AVG else "total_msg_size"


def describe(library: str, coll: str) -> str:
    """One phrase for the report and --json: what the library's size is."""
    if coll == "barrier":
        return "no size"
    if library == "openmpi":
        return "type size × count × p" if coll in OMPI_TIMES_P else "type size × count"
    return f"{mpich_key(coll)} ({'per rank' if coll in MPICH_AVG else 'whole message'})"
