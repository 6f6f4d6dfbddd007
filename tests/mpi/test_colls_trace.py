# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope run --trace`, trace.parquet, `mpiscope timechart` and the
report's time chart, on a real 4-rank run of the ring allgather."""

import json

import pyarrow.compute as pc

from mpiscope.store import trace
from runcli import mpiscope, run_ok


def test_ring_allgather_trace_and_time_chart(tmp_path):
    run, summary = run_ok("-n", 4, "--bench", "allgather", "--algo", "ring,mpi", "--sizes", "1K",
                          "--trace", "--reps-min", 5, "--reps-max", 8, "--warmup", 2, out=tmp_path)
    assert summary["context"]["status"] == "completed"
    table, blocks = trace.load_trace(run)
    # only our own algorithm is traced, every recorded repetition of it, no warm-up
    assert trace.traced_series(table) == [("allgather", "ring", 1024)]
    reps = {b["rank"]: b["reps"] for b in blocks}
    assert sorted(reps) == [0, 1, 2, 3] and all(b["reps_traced"] == b["reps"] and b["dropped"] == 0
                                                for b in blocks)
    assert sorted(set(table["rep"].to_pylist())) == list(range(reps[0]))
    for rep in range(reps[0]):
        events = trace.select(table, "allgather", "ring", 1024, rep=rep)
        for rank in range(4):
            mine = events.filter(pc.equal(events["rank"], rank)).to_pylist()
            # exactly 3 sends and 3 receives, step by step: receive from the left
            # neighbour posted, then the send to the right one
            assert [e["op"] for e in mine] == ["recv", "send"] * 3
            assert [e["seq"] for e in mine] == list(range(6))
            assert {e["peer"] for e in mine if e["op"] == "recv"} == {(rank - 1) % 4}
            assert {e["peer"] for e in mine if e["op"] == "send"} == {(rank + 1) % 4}
            assert all(e["bytes"] == 1024 for e in mine)
            for e in mine:
                assert e["t_post_local"] <= e["t_done_local"]
            # a step's send starts after the previous step's receive completed
            for k in (1, 2):
                assert mine[2 * k + 1]["t_post_local"] >= mine[2 * k - 2]["t_done_local"]
        msgs = trace.messages(events)
        assert len(msgs) == 12
        assert all(m.dst == (m.src + 1) % 4 for m in msgs)
        assert all(m.recv_done >= m.send_post - 1e-6 for m in msgs)  # global clock, sync error < 1 µs

    svg = tmp_path / "ring.svg"
    p = mpiscope("timechart", run, "--bench", "allgather", "--algo", "ring", "--size", "1K", "--rep", 1,
                 "-o", svg)
    assert p.returncode == 0, p.stderr
    assert "3 sends" not in p.stdout and "12 sends, 12 receives" in p.stdout
    text = svg.read_text()
    assert text.startswith("<?xml") and "<svg" in text and "rank 3" in text
    # the library's own collective has no trace: the error names what was traced
    p = mpiscope("timechart", run, "--bench", "allgather", "--algo", "mpi", "--size", "1K")
    assert p.returncode == 2 and "traced: allgather/ring 1024" in p.stderr
    p = mpiscope("timechart", run, "--bench", "allgather", "--algo", "ring", "--size", "1K",
                 "--rep", 99)
    assert p.returncode == 2 and "were traced completely" in p.stderr

    html = tmp_path / "report.html"
    p = mpiscope("report", run, "-o", html)
    assert p.returncode == 0, p.stderr
    text = html.read_text()
    assert text.count("<h3>Time chart</h3>") == 1 and "allgather/ring, 1024 B, 4 ranks" in text

    # the traced repetition as a schedule (sim/from_trace.py), simulated
    goal = tmp_path / "traced.goal"
    p = mpiscope("sim", "schedule", "--from-trace", run, "--bench", "allgather", "--algo", "ring",
                 "--size", "1K", "--rep", 1, "-o", goal)
    assert p.returncode == 0, p.stderr
    assert goal.read_text().count(" send 1024b ") == 12
    p = mpiscope("sim", "run", goal, "--alpha", "1us", "--beta", "1ns/B", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["nranks"] == 4 and doc["messages"] == 12 and doc["median_s"] >= 3 * (1e-6 + 1024e-9)
