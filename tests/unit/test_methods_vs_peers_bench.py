# SPDX-License-Identifier: BSD-3-Clause
"""bench/methods_vs_peers.py's reading of its trials: which measured cause
accounts for a cell outside 0.9-1.1, which numbers count as stalled and whether a whole launch or one
call was, that
--tables-from rebuilds the tables of the trials a document holds, --ops,
osu_reduce_scatter's sizes and IMB's Sendrecv/Exchange rows."""

import argparse
import json
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))
import methods_vs_peers as bench  # noqa: E402
import peer_tools  # noqa: E402


def test_a_slower_reproduction_with_its_tail_is_the_tail():
    # 1.4 x the tool: offset 0.29 of the reproduced number; a tail of 0.2 is more than half of it
    assert bench.measured_cause("allreduce", 1.4, 1.2, 1.6, 1.1, 0.2) == "tail of the reproduction"
    assert bench.measured_cause("allreduce", 1.4, 1.2, 1.6, 1.1, 0.1) == "none measured"


def test_a_bandwidth_tail_makes_it_lower():
    assert bench.measured_cause("bw", 0.7, 0.6, 0.8, 1.1, -0.3) == "tail of the reproduction"
    assert bench.measured_cause("bw", 1.4, 1.2, 1.6, 1.1, -0.3) == "none measured"


def test_the_tools_spread_and_trials_on_both_sides():
    assert bench.measured_cause("bcast", 0.8, 0.7, 0.85, 1.3, 0.0) == "the tool's own spread"
    assert bench.measured_cause("bcast", 0.8, 0.7, 0.85, 1.2, 0.0) == "none measured"
    assert bench.measured_cause("bcast", 0.8, 0.5, 1.2, 1.0, 0.0) == "trials on both sides of 1"


def test_stalled_numbers_are_the_worse_side_of_the_median():
    assert bench.worse_share([1.0, 1.0, 1.3, 1.2, 0.5], "allreduce") == (1, 5)
    assert bench.worse_share([1.0, 1.0, 0.7, 1.5, 0.9], "bw") == (1, 5)
    assert bench.worse_share([1.0, 9.0], "allreduce") == (0, 0)  # too few trials for a typical value


def test_a_launch_slow_at_half_its_sizes_is_launch_wide_else_isolated():
    assert bench.launch_wide([True, True, False, False]) == (2, 0)
    assert bench.launch_wide([True, False, False, None, False]) == (0, 1)  # no number: not a size of the launch
    assert bench.launch_wide([None, None]) == (0, 0)
    flags = bench.worse_flags([1.0, None, 1.3, 1.0], "allreduce")
    assert flags == [False, None, True, False]


def test_tables_from_a_document_rebuild_its_trials(tmp_path, monkeypatch, capsys):
    cells = [
        {
            "tool": "osu",
            "bench": "pingpong",
            "size": 1,
            "real": r,
            "reproduced": o,
            "causes": {"statistic": 0.1},
            "mpiscope_median": 0.3,
        }
        for r, o in ((0.3, 0.3), (0.3, 0.6))
    ]
    doc = tmp_path / "kept.json"
    doc.write_text(json.dumps({"results": {"trials": [[cells[0]], [cells[1]]]}}))
    trials, methods = bench.trials_of(doc)
    assert methods == ["osu"]
    assert trials[1]["pingpong"]["ours"][("osu", 1)]["number"] == 0.6
    monkeypatch.setattr(bench.benchjson, "mpi_names", lambda *compilers: [])  # asks mpicc, a process
    bench.report(argparse.Namespace(np=2, json=None), trials, methods, final=True)
    out = capsys.readouterr().out
    assert "1 trials in turns" not in out and "2 trials in turns: 0 of 1 medians within 0.9-1.1" in out
    first = next(line.split() for line in out.splitlines() if line.split()[:2] == ["pingpong", "1"])
    assert first[2:7] == ["us", "0.3", "1.5", "1", "2"]  # the ratios 1 and 2: median 1.5
    outside = next(line for line in out.splitlines() if line.split()[:3] == ["pingpong", "1", "osu"])
    assert outside.endswith("trials on both sides of 1")


def test_ops_are_picked_in_the_benchs_order_and_unknown_ones_refused():
    assert bench.parse_ops("exchange, reduce_scatter,sendrecv") == ("reduce_scatter", "sendrecv", "exchange")
    for bad in ("exchange,alltoallv", " , "):
        try:
            bench.parse_ops(bad)
        except ValueError as e:
            assert "choose from" in str(e)
        else:
            raise AssertionError(f"--ops {bad!r} was accepted")


def test_osu_reduce_scatter_is_keyed_by_each_ranks_block(monkeypatch):
    asked = []

    def rows(program, sizes, np):
        asked.append(list(sizes))
        return {s: [s / 1000] for s in sizes}

    monkeypatch.setattr(bench, "osu_rows", rows)
    got = bench.real_osu(Path("osu_reduce_scatter"), "reduce_scatter", 4)
    assert asked[0][:2] == [4, 16] and asked[0][-1] == 4 * 4**11  # the whole vector: p x each block
    assert got[1] == 0.004 and got[4**11] == 4 * 4**11 / 1000
    assert bench.real_osu(Path("osu_allreduce"), "allreduce", 4)[16] == 0.016


def test_imb_sendrecv_and_exchange_rows_are_read_with_their_bandwidth(monkeypatch):
    printed = """
#----------------------------------------------------------------
# Benchmarking Exchange
# #processes = 2
#----------------------------------------------------------------
       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]   Mbytes/sec
            1         1000         1.19         1.21         1.20         3.31
         1024         1000         3.14         3.16         3.15      1296.20
#----------------------------------------------------------------
# Benchmarking Reduce_scatter
# #processes = 2
#----------------------------------------------------------------
       #bytes #repetitions  t_min[usec]  t_max[usec]  t_avg[usec]
         1024         1000         2.23         2.40         2.31
"""
    monkeypatch.setattr(peer_tools, "run", lambda cmd: printed)
    rows = peer_tools.imb_rows("IMB-MPI1", ["Exchange", "Reduce_scatter"], [1, 1024], exact=True)
    assert rows[("Exchange", 1024)]["t_avg[usec]"] == 3.15 and rows[("Exchange", 1024)]["Mbytes/sec"] == 1296.2
    assert rows[("Reduce_scatter", 1024)]["t_avg[usec]"] == 2.31 and "Mbytes/sec" not in rows[("Reduce_scatter", 1024)]
