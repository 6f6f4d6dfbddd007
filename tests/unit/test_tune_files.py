# SPDX-License-Identifier: BSD-3-Clause
"""Sizes as each library means them, rules, and the files mpiscope tune writes,
read back by our own readers (docs/reference/formats/tuning-files.md)."""

import json

import pytest

from mpiscope import mpilibs
from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.mpich import selection_json as mpich_selection
from mpiscope.mpilibs.openmpi import rules as ompi_rules
from mpiscope.mpilibs.algorithm_catalog import DEFAULT, Algorithm, Catalog
from mpiscope.mpilibs.selection import Rule, check, chosen
from mpiscope.tune import rules as R, library_sizes

# ---------------------------------------------------------------- sizes

@pytest.mark.parametrize("coll,size,p,ompi,mpich", [
    ("allreduce", 1024, 8, 1024, 1024),
    ("allreduce", 1, 8, 4, 4),           # one MPI_INT at least
    ("bcast", 1000, 8, 1000, 1000),
    ("reduce", 6, 4, 4, 4),              # 6 B is one int
    ("alltoall", 64, 8, 512, 64),        # Open MPI: × p; MPICH avg_msg_size: one block
    ("allgather", 64, 8, 512, 512),      # MPICH total_msg_size
    ("gather", 100, 4, 400, 400),
    ("scatter", 100, 4, 400, 400),
    ("reduce_scatter_block", 64, 8, 512, 512),
    ("barrier", 0, 8, 0, 0),
])
def test_library_sizes(coll, size, p, ompi, mpich):
    assert library_sizes.library_size(mpilibs.get("openmpi"), coll, size, p) == ompi
    assert library_sizes.library_size(mpilibs.get("mpich"), coll, size, p) == mpich


def test_mpich_size_keys():
    assert mpich_selection.size_key("bcast") == "avg_msg_size"
    assert mpich_selection.size_key("alltoall") == "avg_msg_size"
    assert mpich_selection.size_key("allgather") == "total_msg_size"
    assert mpich_selection.size_key("barrier") is None


# ---------------------------------------------------------------- rules

def test_rules_start_at_zero_merge_and_change_at_the_geometric_mean():
    pts = [R.Point(64, "a"), R.Point(16, "a"), R.Point(1024, "b"), R.Point(4096, "b")]
    rules = R.from_points(pts)
    assert rules == [Rule(0, "a"), Rule(256, "b")]  # sqrt(64 * 1024)
    assert chosen(rules, 255) == "a" and chosen(rules, 256) == "b"
    with pytest.raises(UsageError, match="not 0"):
        check([Rule(8, "a")])
    with pytest.raises(UsageError, match="rise"):
        check([Rule(0, "a"), Rule(0, "b")])


def test_bound_merges_the_cheapest_rule_and_states_its_cost():
    pts = [R.Point(8, "a", {"a": 1.0, "b": 2.0}),
           R.Point(64, "b", {"a": 1.05, "b": 1.0}),   # b wins by 5% only
           R.Point(512, "a", {"a": 1.0, "b": 3.0})]
    rules, cost = R.bounded(pts, 3)
    assert len(rules) == 3 and cost == []
    rules, cost = R.bounded(pts, 1)
    assert rules == [Rule(0, "a")]
    assert cost == [(64, pytest.approx(1.05), None)]


def test_bound_with_weights_gives_way_where_the_application_does_not_call():
    """Without weights the 5% loss at 64 is the cheapest merge; when the
    application calls only 64, the bound keeps b there and gives way at a
    size nobody calls."""
    pts = [R.Point(8, "a", {"a": 1.0, "b": 2.0}, 0.0),
           R.Point(64, "b", {"a": 1.05, "b": 1.0}, 1000.0),
           R.Point(512, "a", {"a": 1.0, "b": 3.0}, 0.0)]
    rules, cost = R.bounded(pts, 2)
    assert len(rules) == 2 and chosen(rules, 64) == "b"
    assert len(cost) == 1 and cost[0][0] in (8, 512) and cost[0][2] == 0.0
    unweighted = [R.Point(p.size, p.winner, p.medians) for p in pts]
    rules, cost = R.bounded(unweighted, 2)
    assert chosen(rules, 64) == "a"


# ---------------------------------------------------------------- files

def ompi_catalog():
    algs = {"allreduce": [Algorithm("recursive_doubling", "3"), Algorithm("ring", "4")],
            "bcast": [Algorithm("binomial", "6"), Algorithm("scatter_allgather", "8")],
            "barrier": [Algorithm("bruck", "4")]}
    return Catalog("openmpi", "4.1.4", algs, "test", rule_params={"allreduce": (4, 0)})


TABLE = {"allreduce": {4: [Rule(0, DEFAULT), Rule(8192, "ring")],
                       8: [Rule(0, "recursive_doubling"), Rule(65536, "ring")]},
         "bcast": {8: [Rule(0, "binomial"), Rule(12288, "scatter_allgather")]},
         "barrier": {8: [Rule(0, "bruck")]}}


def test_classic_file_round_trip_and_lookup():
    cat = ompi_catalog()
    text = ompi_rules.write_classic(TABLE, cat)
    parsed = ompi_rules.read_classic(text, cat)
    assert list(parsed) == ["allreduce", "barrier", "bcast"]  # by collective id: 2, 6, 7
    # entries: 1 (library's own below), 4, 5 (own), 8, 9 (own)
    assert [p for p, _ in parsed["allreduce"]] == [1, 4, 5, 8, 9]
    assert parsed["allreduce"][1][1] == [(0, 0, 4, 0), (8192, 4, 4, 0)]
    sel = ompi_rules.classic_selects
    assert sel(parsed, "allreduce", 4, 8191) == 0 and sel(parsed, "allreduce", 4, 8192) == 4
    assert sel(parsed, "allreduce", 8, 100) == 3 and sel(parsed, "allreduce", 8, 1 << 20) == 4
    assert sel(parsed, "allreduce", 6, 1 << 20) == 0     # not tuned: the library's own
    assert sel(parsed, "allreduce", 2, 1 << 20) == 0
    assert sel(parsed, "bcast", 8, 12288) == 8 and sel(parsed, "barrier", 8, 0) == 4


def test_classic_reader_refuses_what_open_mpi_would_silently_ignore():
    cat = ompi_catalog()
    text = ompi_rules.write_classic(TABLE, cat)
    bad_first = text.replace("0 3 4 0  # recursive_doubling", "16 3 4 0")
    with pytest.raises(UsageError, match="not 0"):
        ompi_rules.read_classic(bad_first, cat)
    bad_alg = text.replace("0 3 4 0  # recursive_doubling", "0 17 4 0")
    with pytest.raises(UsageError, match="no algorithm 17"):
        ompi_rules.read_classic(bad_alg, cat)
    with pytest.raises(UsageError, match="octal|decimal"):
        ompi_rules.read_classic(text.replace("8192 4", "08192 4"), cat)
    with pytest.raises(UsageError, match="ends"):
        ompi_rules.read_classic(text.rsplit("\n", 3)[0], cat)
    with pytest.raises(UsageError, match="not 0"):
        ompi_rules.write_classic({"bcast": {8: [Rule(4, "binomial")]}}, cat)


def test_ompi_json_round_trip():
    cat = ompi_catalog()
    doc = ompi_rules.write_json(TABLE, cat)
    assert json.loads(doc)["module"] == "tuned"
    parsed = ompi_rules.read_json(doc, cat)
    assert parsed["allreduce"][0] == (4, 4, [(0, 8191, "ignore"), (8192, "inf", "ring")])
    broken = doc.replace('"ring"', '"nosuch"', 1)
    with pytest.raises(UsageError, match="nosuch"):
        ompi_rules.read_json(broken, cat)


def mpich_catalog():
    default = {"collective=bcast": {"comm_type=intra": {"comm_size<8": {"avg_msg_size=any": {
                   "algorithm=MPIR_Bcast_intra_binomial": {}}},
                   "comm_size=any": {"algorithm=MPIR_Bcast_intra_scatter_ring_allgather": {}}},
               "comm_type=inter": {"algorithm=MPIR_Bcast_inter_remote_send_local_bcast": {}}},
               "collective=barrier": {"comm_type=intra": {
                   "algorithm=MPIR_Barrier_intra_dissemination": {}}}}
    algs = {"bcast": [Algorithm("binomial", "binomial", "MPIR_Bcast_intra_binomial"),
                      Algorithm("scatter_ring_allgather", "scatter_ring_allgather",
                                "MPIR_Bcast_intra_scatter_ring_allgather")],
            "barrier": [Algorithm("nb", "nb", "MPIR_Barrier_allcomm_nb")]}
    containers = frozenset({"MPIR_Bcast_intra_binomial", "MPIR_Bcast_intra_scatter_ring_allgather",
                            "MPIR_Bcast_inter_remote_send_local_bcast", "MPIR_Barrier_allcomm_nb",
                            "MPIR_Barrier_intra_dissemination"})
    return Catalog("mpich", "4.0.2", algs, "test", default_tree=default, containers=containers)


def test_mpich_json_keeps_the_library_tree_around_the_tuned_cells():
    cat = mpich_catalog()
    table = {"bcast": {4: [Rule(0, "binomial"), Rule(4096, DEFAULT),
                           Rule(65536, "scatter_ring_allgather")]},
             "barrier": {4: [Rule(0, "nb")]}}
    text = mpich_selection.write(table, cat)
    tree = mpich_selection.read(text, cat)
    intra = tree["collective=bcast"]["comm_type=intra"]
    assert list(intra) == ["comm_size<=3", "comm_size<=4", "comm_size=any"]
    assert list(intra["comm_size<=4"]) == ["avg_msg_size<4096", "avg_msg_size<65536",
                                           "avg_msg_size=any"]
    assert "comm_type=inter" in tree["collective=bcast"]   # the library's own, kept
    sel = mpich_selection.selects
    assert sel(tree, "bcast", 4, 100) == "MPIR_Bcast_intra_binomial"
    assert sel(tree, "bcast", 4, 1 << 20) == "MPIR_Bcast_intra_scatter_ring_allgather"
    # the default's range and other sizes lead into the library's own subtree, below our
    # message-size conditions with its "comm_size<8" as "comm_size<=7" (MPICH's search reads
    # "<" as "<=" there)
    assert intra["comm_size=any"]["comm_size<8"] == {"avg_msg_size=any": {
        "algorithm=MPIR_Bcast_intra_binomial": {}}}
    assert list(intra["comm_size<=4"]["avg_msg_size<65536"]) == ["comm_size<=7", "comm_size=any"]
    assert intra["comm_size<=4"]["avg_msg_size<65536"]["comm_size<=7"] == \
        intra["comm_size=any"]["comm_size<8"]
    assert sel(tree, "barrier", 4, 0) == "MPIR_Barrier_allcomm_nb"
    assert sel(tree, "barrier", 8, 0) == "MPIR_Barrier_intra_dissemination"


def test_mpich_subtree_below_our_conditions_reads_as_the_library_reads_it():
    """MPICH's search takes "comm_size<8" for "<= 8"; its pruning at
    communicator creation reads it right and stops at the first condition
    not about the communicator. Moved below our message-size conditions,
    the conditions the pruning decided are rewritten; the ones the
    library's own search decided (below "is_sendbuf_inplace=no") are not."""
    lib = {"comm_size<8": {"algorithm=A": {}},
           "comm_hierarchy=any": {"is_sendbuf_inplace=no": {"comm_size<8": {"algorithm=B": {}},
                                                            "comm_size=any": {"algorithm=C": {}}},
                                  "comm_size<4": {"algorithm=D": {}},
                                  "comm_size=any": {"algorithm=E": {}}}}
    assert mpich_selection._as_searched(lib) == {
        "comm_size<=7": {"algorithm=A": {}},
        "comm_hierarchy=any": {"is_sendbuf_inplace=no": {"comm_size<8": {"algorithm=B": {}},
                                                         "comm_size=any": {"algorithm=C": {}}},
                               "comm_size<4": {"algorithm=D": {}},   # after a searched sibling
                               "comm_size=any": {"algorithm=E": {}}}}


def test_mpich_reader_refuses_what_mpich_would_abort_on():
    cat = mpich_catalog()
    with pytest.raises(UsageError, match="no algorithm MPIR_Bcast_intra_nosuch"):
        mpich_selection.read(json.dumps({"collective=bcast": {"comm_type=intra": {
            "algorithm=MPIR_Bcast_intra_nosuch": {}}}}), cat)
    with pytest.raises(UsageError, match="last condition"):
        mpich_selection.read(json.dumps({"collective=bcast": {"comm_type=intra": {
            "avg_msg_size<64": {"algorithm=MPIR_Bcast_intra_binomial": {}}}}}), cat)
    with pytest.raises(UsageError, match="unknown condition"):
        mpich_selection.read(json.dumps({"msg_size<64": {}}), cat)


# ---------------------------------------------------------------- verification, weights, search

def test_speedup_is_default_over_tuned_with_the_interval_inverted():
    import numpy as np
    from mpiscope.tune import verdicts as V
    rng = np.random.default_rng(1)
    d = np.linspace(2.0, 2.2, 40)
    t = np.linspace(1.0, 1.1, 40)
    row = V.speedup_row(d, t, rng, 0.02, 0.05)
    assert row["speedup"] == pytest.approx(2.0, rel=0.01)
    assert row["speedup_low"] <= row["speedup"] <= row["speedup_high"]
    assert row["verdict"] == "tuned faster"
    assert V.speedup_row(t, d, rng, 0.02, 0.05)["verdict"] == "tuned slower"


def test_file_in_effect_by_debugger_then_by_time():
    from mpiscope.tune import verdicts as V
    import numpy as np
    assert V.selection_check(np.array([1.0]), np.array([1.1]), np.array([2.0])) == "forced"
    assert V.selection_check(np.array([1.9]), np.array([1.1]), np.array([2.0])) == "default"
    gdb_ok = [{"rule": "ring", "library_selects": "f_ring", "expected": "f_ring"}]
    gdb_bad = gdb_ok + [{"rule": DEFAULT, "library_selects": "f_a", "expected": "f_b"}]
    assert V.file_in_effect(gdb_ok) is True and V.file_in_effect(gdb_bad) is False
    by_time = [{"rule": "ring", "forced_vs_default": "faster", "selection_check": "forced"},
               {"rule": "ring", "forced_vs_default": "faster", "selection_check": "default"},
               {"rule": "bruck", "forced_vs_default": "faster", "selection_check": "forced"}]
    assert V.file_in_effect(by_time) is True
    assert V.file_in_effect(by_time[1:2]) is False
    assert V.file_in_effect([{"rule": DEFAULT}]) is None
    assert V.geomean([2.0, 0.5]) == pytest.approx(1.0)


def test_weights_file_and_the_application_time(tmp_path):
    from mpiscope.tune.weights import for_comm_size, read_weights, weighted
    short = tmp_path / "short.json"
    short.write_text(json.dumps({"collectives": {"allreduce": {"sizes": {"8": 100, "65536": 10}}}}))
    w, left_out = read_weights(short)
    assert w == {"allreduce": {None: {8: 100.0, 65536: 10.0}}} and left_out == []
    cells = [{"collective": "allreduce", "p": 4, "size": 8, "speedup": 2.0,
              "median_default_s": 2e-6, "median_tuned_s": 1e-6},
             {"collective": "allreduce", "p": 4, "size": 65536, "speedup": 1.0,
              "median_default_s": 1e-4, "median_tuned_s": 1e-4}]
    r = weighted(w, cells, [4])
    assert r["before_s"] == pytest.approx(100 * 2e-6 + 10 * 1e-4)
    assert r["after_s"] == pytest.approx(100 * 1e-6 + 10 * 1e-4)
    # what mpiscope profile weights writes: per communicator size, size bins
    prof = tmp_path / "prof.json"
    prof.write_text(json.dumps({"format": "mpiscope-profile-weights", "version": 1, "run_id": "x",
                                "np": 8, "size_meaning": "…", "collectives": [
        {"collective": "allreduce", "comm_size": 8, "blocking": True, "calls": 50, "bytes": 0,
         "time_s": 0.1, "time_share": 0.5, "sizes": [
             {"lo": 4, "hi": 16, "calls": 50, "bytes": 400, "time_s": 0.1, "call_share": 1,
              "time_share": 1}]},
        {"collective": "allreduce", "comm_size": 2, "blocking": True, "calls": 7, "bytes": 0,
         "time_s": 0.1, "time_share": 0.5, "sizes": [
             {"lo": 65536, "hi": 65536, "calls": 7, "bytes": 0, "time_s": 0.1, "call_share": 1,
              "time_share": 1}]},
        {"collective": "allgatherv", "comm_size": 8, "blocking": True, "calls": 1, "bytes": 0,
         "time_s": 0, "time_share": 0, "sizes": [
             {"lo": 1, "hi": 1, "calls": 1, "bytes": 0, "time_s": 0, "call_share": 1,
              "time_share": 0}]}]}))
    w, left_out = read_weights(prof, tunable=["allreduce"])
    assert w == {"allreduce": {8: {8: 50.0}, 2: {65536: 7.0}}} and left_out == ["allgatherv"]
    # tuned on 2 and 4 ranks: the 8-rank calls go to 4, the 2-rank ones to 2
    assert for_comm_size(w, 4, [2, 4]) == {"allreduce": {8: 50.0}}
    assert for_comm_size(w, 2, [2, 4]) == {"allreduce": {65536: 7.0}}
    r = weighted(w, cells, [2, 4])
    assert r["by_p"]["4"]["before_s"] == pytest.approx(50 * 2e-6)
    assert r["not_measured"] == ["allreduce"]          # nothing verified on 2 ranks
    with pytest.raises(UsageError, match="weights"):
        read_weights("/nonexistent.json")


def test_search_grid_and_usable_algorithms():
    from mpiscope.tune.adaptive import coarse_grid
    from mpiscope.tune.tuner import usable
    assert coarse_grid([1, 2, 4, 8, 16, 32, 64], 3) == [1, 8, 64]
    assert coarse_grid([1, 2, 4, 8, 16], 3) == [1, 8, 16]
    cat = Catalog("openmpi", "4.1.4", {"allgather": [Algorithm("ring", "4"),
                                                     Algorithm("two_proc", "6")]}, "test")
    assert usable(cat, "allgather", 2) == ["ring", "two_proc"]
    assert usable(cat, "allgather", 8) == ["ring"]      # two_proc aborts on 8 ranks
    assert usable(cat, "allgather", 8, skip=("ring",)) == []
