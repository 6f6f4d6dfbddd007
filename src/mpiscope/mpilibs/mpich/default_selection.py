# SPDX-License-Identifier: BSD-3-Clause
"""Which algorithm MPICH's own selection runs at a cell, found as MPICH 4.x
finds it (src/mpi/coll/src/csel.c): an object's keys tried in order, an
object holding an algorithm or composition being that container. A new
communicator's tree is pruned by the conditions about the communicator, up
to the first other one (prune_tree); each call searches on from there
(MPIR_Csel_search), which reads "comm_size<N" as "comm_size<=N". The device
layer (ch4) selects first: only a composition handing the whole communicator
to the network module, whose collective is MPIR_<Coll>_impl (4.0 to 5.0,
ch4_coll_impl.h), leaves the choice to the MPIR tree; elsewhere (node-aware
compositions, shared memory's own algorithms) no MPIR algorithm is claimed."""

from __future__ import annotations

from dataclasses import dataclass

# The compositions whose only collective call is the network module's on the
# communicator itself (ch4_coll_impl.h).
WHOLE_COMM = frozenset(
    {
        "MPIDI_Barrier_intra_composition_beta",
        "MPIDI_Bcast_intra_composition_gamma",
        "MPIDI_Allreduce_intra_composition_beta",
        "MPIDI_Reduce_intra_composition_gamma",
        "MPIDI_Allgather_intra_composition_alpha",
        "MPIDI_Alltoall_intra_composition_alpha",
        "MPIDI_Gather_intra_composition_alpha",
        "MPIDI_Scatter_intra_composition_alpha",
        "MPIDI_Reduce_scatter_block_intra_composition_alpha",
    }
)
CONTAINER = ("algorithm=", "composition=")
# conditions prune_tree decides (MPICH 4.0); it stops at any other
PRUNED = ("comm_type=", "comm_size", "comm_hierarchy=", "is_node_consecutive=", "comm_avg_ppn<=")


@dataclass(frozen=True)
class Comm:
    """An intra-communicator as the selection sees it, from its ranks per node
    (in rank order, each node's ranks consecutive)."""

    per_node: tuple

    @property
    def size(self) -> int:
        return sum(self.per_node)

    @property
    def hierarchical(self) -> bool:
        """MPIR_Comm_create_subcomms made node communicators: some node holds two ranks."""
        return any(n > 1 for n in self.per_node)


@dataclass(frozen=True)
class Call:
    avg_msg_size: int  # bytes of one rank's buffer (one block)
    total_msg_size: int
    count: int  # elements (get_count)
    commutative: bool = True
    op_built_in: bool = True


def engine_call(coll: str, size: int, p: int) -> Call:
    """A call as native/engine/probe/coll_call.c makes it at a cell: MPI_BYTE,
    reductions MPI_INT sums of max(1, size/4)."""
    reduction = coll in ("allreduce", "reduce", "reduce_scatter_block")
    count = max(1, size // 4) if reduction else size
    nbytes = 4 * count if reduction else size
    return Call(nbytes, nbytes * p, count)


@dataclass
class Node:
    key: str
    success: Node | None = None
    failure: Node | None = None


def parse(obj: dict) -> Node | None:
    """The chain of an object's keys, as csel.c's parse_json_tree builds it."""
    first = prev = None
    for key, value in obj.items():
        k = key.replace(" ", "")
        if k.startswith(CONTAINER):
            return Node(k)
        node = Node(k, parse(value) if isinstance(value, dict) else None)
        if first is None:
            first = node
        else:
            prev.failure = node  # type: ignore[union-attr]
        prev = node
    return first


def _number(k: str, op: str) -> int:
    return int(k.split(op, 1)[1])


def _size_test(k: str, x: int, searching: bool) -> bool:
    if "<=" in k:
        return x <= _number(k, "<=")
    # MPIR_Csel_search takes comm_size<N for comm_size<=N; prune_tree does not
    slip = searching and k.startswith("comm_size<")
    return x <= _number(k, "<") if slip else x < _number(k, "<")


def holds(k: str, comm: Comm, call: Call | None) -> bool | None:
    """Whether condition `k` holds (call None: at pruning, where only the
    communicator is known); None where it cannot be told then."""
    searching = call is not None
    if k.endswith("=any") or k == "any":
        return True if searching or k.startswith(("comm_size=", "comm_hierarchy=")) else None
    if searching is False and not k.startswith(PRUNED):
        return None
    if k.startswith("comm_type="):
        return k == "comm_type=intra"
    if k == "comm_size=pow2":
        return comm.size & (comm.size - 1) == 0
    if k == "comm_size=node_comm_size":
        return comm.hierarchical and len(comm.per_node) == 1
    if k.startswith("comm_size<"):
        return _size_test(k, comm.size, searching)
    if k.startswith("comm_hierarchy="):
        return {"parent": comm.hierarchical, "flat": not comm.hierarchical}.get(k.split("=", 1)[1], False)
    if k.startswith("is_node_consecutive="):
        return k.endswith("=yes")
    if k.startswith("comm_avg_ppn<="):
        return comm.size <= _number(k, "<=") * len(comm.per_node)
    assert call is not None
    if k == "is_multi_threaded=yes" or k == "is_sendbuf_inplace=yes" or k == "is_block_regular=no":
        return False
    if k == "is_multi_threaded=no" or k == "is_sendbuf_inplace=no" or k == "is_block_regular=yes":
        return True
    if k.startswith("is_commutative="):
        return call.commutative == k.endswith("=yes")
    if k.startswith("is_op_built_in="):
        return call.op_built_in == k.endswith("=yes")
    if k == "count<pow2":
        return call.count < 1 << (comm.size.bit_length() - 1)
    for name, x in (
        ("avg_msg_size", call.avg_msg_size),
        ("total_msg_size", call.total_msg_size),
        ("count", call.count),
    ):
        if k.startswith(name + "<"):
            return _size_test(k, x, True)
    raise ValueError(f"a condition MPICH's selection does not know: {k!r}")


def _prune(root: Node | None, comm: Comm) -> Node | None:
    node = root
    while node is not None and not node.key.startswith(CONTAINER):
        h = holds(node.key, comm, None)
        if h is None:
            return node
        node = node.success if h else node.failure
    return node if node is not None else root


def select(tree: dict, coll: str, comm: Comm, call: Call) -> str | None:
    """The container (an algorithm's or composition's name) `tree` selects for
    `call` on `comm`, or None where it selects none."""
    node = _prune(parse(tree.get(f"collective={coll}", {})), comm)
    while node is not None:
        if node.key.startswith(CONTAINER):
            return node.key.split("=", 1)[1]
        node = node.success if holds(node.key, comm, call) else node.failure
    return None


def default_container(mpir_tree: dict, device_tree: dict | None, coll: str, comm: Comm, call: Call) -> str | None:
    """The MPIR algorithm (container name) MPICH's default runs for `call`,
    or None where the device layer runs another composition."""
    if device_tree is not None:
        chosen = select(device_tree, coll, comm, call)
        if chosen is not None and chosen not in WHOLE_COMM:
            return None
    return select(mpir_tree, coll, comm, call)
