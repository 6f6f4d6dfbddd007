# SPDX-License-Identifier: BSD-3-Clause
"""What MPICH's default selects, from its selection trees as csel.c reads them
(mpilibs/mpich/default_selection.py): small trees written here, and the trees
compiled into Debian's MPICH where it is installed."""

from pathlib import Path

import pytest

from mpiscope.mpilibs.mpich import cvars
from mpiscope.mpilibs.mpich.default_selection import Call, Comm, default_container, engine_call, select

FLAT4 = Comm((1, 1, 1, 1))  # four nodes, one rank each
ONE_NODE4 = Comm((4,))
CALL = Call(avg_msg_size=1024, total_msg_size=4096, count=256)


def test_siblings_are_tried_in_order_and_the_first_that_holds_is_entered():
    tree = {
        "collective=bcast": {
            "comm_type=intra": {
                "avg_msg_size<=512": {"algorithm=A": {}},
                "avg_msg_size<2048": {"algorithm=B": {}},
                "avg_msg_size<=4096": {"algorithm=C": {}},
                "avg_msg_size=any": {"algorithm=D": {}},
            }
        }
    }
    assert select(tree, "bcast", FLAT4, CALL) == "B"
    assert select(tree, "bcast", FLAT4, Call(512, 2048, 512)) == "A"
    assert select(tree, "bcast", FLAT4, Call(4096, 16384, 4096)) == "C"
    assert select(tree, "bcast", FLAT4, Call(4097, 16388, 4097)) == "D"
    assert select(tree, "allreduce", FLAT4, CALL) is None


def test_comm_size_lt_is_read_strictly_when_pruned_and_as_le_when_searched():
    # The communicator's conditions are decided at its creation (prune_tree),
    # up to the first other condition; below that the call's search reads
    # "comm_size<N" as "comm_size<=N" (MPICH 4.0 to 5.0).
    tree = {
        "collective=allgather": {
            "comm_size<4": {"algorithm=PRUNED_LT": {}},
            "comm_size=any": {
                "total_msg_size<=1000000": {
                    "comm_size<4": {"algorithm=SEARCHED_LT": {}},
                    "comm_size=any": {"algorithm=OTHER": {}},
                },
                "total_msg_size=any": {"algorithm=BIG": {}},
            },
        }
    }
    assert select(tree, "allgather", FLAT4, CALL) == "SEARCHED_LT"
    assert select(tree, "allgather", Comm((1, 1, 1)), CALL) == "PRUNED_LT"
    assert select(tree, "allgather", Comm((1,) * 5), CALL) == "OTHER"


def test_an_object_holding_a_container_is_that_container():
    tree = {"collective=barrier": {"comm_hierarchy=parent": {"algorithm=SMP": {}}, "algorithm=FIRST": {}}}
    assert select(tree, "barrier", ONE_NODE4, CALL) == "FIRST"


def test_hierarchy_pow2_count_and_operation_conditions():
    tree = {
        "collective=allreduce": {
            "comm_type=intra": {
                "comm_hierarchy=parent": {"algorithm=NODE_AWARE": {}},
                "comm_size=pow2": {
                    "is_commutative=no": {"algorithm=NONCOMM": {}},
                    "count<pow2": {"algorithm=FEW": {}},
                    "count=any": {"algorithm=MANY": {}},
                },
                "comm_size=any": {"algorithm=NOT_POW2": {}},
            }
        }
    }
    assert select(tree, "allreduce", Comm((2, 2)), CALL) == "NODE_AWARE"
    assert select(tree, "allreduce", FLAT4, CALL) == "MANY"
    assert select(tree, "allreduce", FLAT4, Call(12, 48, 3)) == "FEW"  # 3 elements < 4 ranks
    assert select(tree, "allreduce", FLAT4, Call(1024, 4096, 256, commutative=False)) == "NONCOMM"
    assert select(tree, "allreduce", Comm((1,) * 6), CALL) == "NOT_POW2"


def test_the_mpir_tree_decides_only_where_the_device_hands_over_the_whole_communicator():
    device = {
        "collective=allreduce": {
            "comm_type=intra": {
                "comm_size=node_comm_size": {"composition=MPIDI_Allreduce_intra_composition_gamma": {}},
                "comm_size=any": {"composition=MPIDI_Allreduce_intra_composition_beta": {}},
            }
        }
    }
    mpir = {"collective=allreduce": {"comm_type=intra": {"algorithm=MPIR_Allreduce_intra_ring": {}}}}
    assert default_container(mpir, device, "allreduce", FLAT4, CALL) == "MPIR_Allreduce_intra_ring"
    assert default_container(mpir, device, "allreduce", ONE_NODE4, CALL) is None  # shared memory's own
    assert default_container(mpir, None, "allreduce", ONE_NODE4, CALL) == "MPIR_Allreduce_intra_ring"
    # a collective the device tree lacks goes to MPIR_<Coll>_impl
    assert default_container({"collective=bcast": {"algorithm=X": {}}}, device, "bcast", ONE_NODE4, CALL) == "X"


def test_engine_calls_are_the_probes():
    assert engine_call("allreduce", 1024, 4) == Call(1024, 4096, 256)
    assert engine_call("allreduce", 2, 4) == Call(4, 16, 1)  # one MPI_INT at least
    assert engine_call("bcast", 1000, 8) == Call(1000, 8000, 1000)


LIBMPICH = Path("/usr/lib/x86_64-linux-gnu/libmpich.so.12")


@pytest.mark.skipif(not LIBMPICH.exists(), reason="Debian's MPICH is not installed")
def test_debian_mpich_trees():
    blob = LIBMPICH.read_bytes()
    mpir, device = cvars.library_default_tree(blob), cvars.library_device_tree(blob)
    assert mpir and device

    def runs(coll, comm, size):
        return default_container(mpir, device, coll, comm, engine_call(coll, size, comm.size))

    # one rank per node: the device passes allreduce on whole (composition beta)
    assert runs("allreduce", FLAT4, 4) == "MPIR_Allreduce_intra_recursive_doubling"  # avg_msg_size<=8
    assert runs("allreduce", FLAT4, 741455) == "MPIR_Allreduce_intra_reduce_scatter_allgather"
    # bcast's "comm_size<8" is decided at pruning, strictly: 8 ranks take the pow2 branch
    assert runs("bcast", Comm((1,) * 8), 65536) == "MPIR_Bcast_intra_scatter_recursive_doubling_allgather"
    assert runs("bcast", Comm((1,) * 6), 65536) == "MPIR_Bcast_intra_binomial"
    # on one node allreduce goes to shared memory's own algorithms: nothing claimed
    assert runs("allreduce", ONE_NODE4, 1024) is None


def test_an_unknown_condition_is_refused_not_guessed():
    tree = {"collective=bcast": {"comm_type=intra": {"is_gpu_buffer=yes": {"algorithm=A": {}}}}}
    with pytest.raises(ValueError, match="is_gpu_buffer"):
        select(tree, "bcast", FLAT4, CALL)


def test_the_tunes_placement_of_ranks_on_nodes():
    from types import SimpleNamespace

    from mpiscope.tune.tuner import _per_node

    def plan(np, hosts=None, ppn=None):
        return SimpleNamespace(np=np, hosts=hosts, ppn=ppn, cluster=None)

    assert _per_node(plan(4)) == [4]  # all here
    assert _per_node(plan(5, ppn=2)) == [2, 2, 1]
    assert _per_node(plan(4, hosts=[("a", 1), ("b", 1), ("c", 2)])) == [1, 1, 2]
