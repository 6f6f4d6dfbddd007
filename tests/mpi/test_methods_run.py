# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope run --methods all` on 2 ranks: every peer's method runs beside
mpiscope's own series, is stored as the tool times it, and `mpiscope
methods` prints each tool's number with terms that add up to its
difference. Invariants only: no speed is asserted."""

import json
import math
from pathlib import Path

import jsonschema
import pyarrow.compute as pc
import pytest

from mpiscope.store.methods_table import read_methods
from runcli import mpiscope, run_dirs, run_ok

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "schemas" / "methods.schema.json"
BENCHES = ("pingpong", "bw", "barrier", "bcast", "allreduce")
# The benchmarks each tool measures among BENCHES.
MEASURES = {"osu": set(BENCHES), "imb": set(BENCHES), "skampi": set(BENCHES) - {"bw"},
            "mpptest": set(BENCHES), "mpibench": {"pingpong", "barrier", "bcast"}}


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    run_dir, _ = run_ok("-n", 2, "--bench", ",".join(BENCHES), "--sizes", "8,4K", "--methods", "all",
                        "--time-budget", "0.2", out=out)
    p = mpiscope("methods", run_dir.name, "--json", out=out)
    assert p.returncode == 0, p.stderr
    return out, run_dir, json.loads(p.stdout)


def _rows(table, method, bench, size, rank, phase):
    """The method table's rows of one method, benchmark, size, rank and phase."""
    t = table.filter(pc.and_(pc.and_(pc.equal(table["method"], method), pc.equal(table["bench"], bench)),
                             pc.and_(pc.equal(table["size"], size), pc.equal(table["rank"], rank))))
    return t.filter(pc.equal(t["phase"], phase))


def test_every_method_is_stored_as_its_tool_times_it(measured):
    _, run_dir, _ = measured
    table = read_methods(run_dir)
    methods = set(table["method"].to_pylist())
    assert set(MEASURES) | {"ref_barrier", "ref_b2b", "ref_rotate", "ref_cycle"} <= methods

    def rows(method, bench, size, rank, phase=0):
        return _rows(table, method, bench, size, rank, phase).num_rows

    # OSU's counts at 8 B: 100 skipped and 1000 timed calls on every rank; its latency on rank 0 alone
    assert rows("osu", "allreduce", 8, 0) == rows("osu", "allreduce", 8, 1) == 1000
    assert rows("osu", "allreduce", 8, 0, phase=1) == 100
    assert rows("osu", "pingpong", 8, 0) == 10000 and rows("osu", "pingpong", 8, 1) == 0
    # IMB: one loop per rank for PingPong and Barrier, 1000 timed calls for a collective at 8 B
    assert rows("imb", "pingpong", 8, 1) == 1 and rows("imb", "barrier", 0, 0) == 1
    assert rows("imb", "bcast", 8, 1) == 1000
    # MPIBench: 1000 repetitions; Mpptest: 29 passes at least over the sizes, interleaved
    assert rows("mpibench", "bcast", 4096, 1) == 1000
    assert rows("mpptest", "allreduce", 8, 0) >= 29
    for column in ("t_start", "t_end"):
        assert pc.all(pc.is_finite(table.filter(pc.equal(table["method"], "osu"))[column])).as_py() is not False


def test_methods_prints_every_tool_with_terms_adding_up(measured):
    _, _, doc = measured
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()), cls=jsonschema.Draft202012Validator)
    seen = {}
    for row in doc["rows"]:
        assert row["ci_low"] <= row["median"] <= row["ci_high"], row
        for t in row["tools"]:
            seen.setdefault(t["method"], set()).add(row["bench"])
            total = sum(term["value"] for term in t["terms"])
            assert math.isclose(total, t["difference"], rel_tol=1e-9, abs_tol=1e-12 * abs(row["median"])), t
            assert math.isclose(t["number"] - row["median"], t["difference"], rel_tol=1e-9)
            assert t["terms"][-1]["cause"] in ("unexplained", "definition"), t["terms"]
            p = t["printed"]
            if "Min Latency(us)" in p:
                assert p["Min Latency(us)"] <= p["Avg Latency(us)"] <= p["Max Latency(us)"]
            if "t_min[usec]" in p:
                assert p["t_min[usec]"] <= p["t_avg[usec]"] <= p["t_max[usec]"]
    assert seen == MEASURES


def test_imb_allocates_its_buffers_at_every_size_as_imb_does(measured):
    # IMB_set_buf: every size gets buffers of its own length rounded up to whole floats
    # (at least one), Barrier none; where they start in a page is recorded, as it moves copies
    _, _, doc = measured
    for row in doc["rows"]:
        params = next(t["params"] for t in row["tools"] if t["method"] == "imb")
        if row["bench"] == "barrier":
            assert "buffer_bytes" not in params, params
            continue
        assert params["buffer_bytes"] == max(4, -(-row["size"] // 4) * 4), (row["bench"], row["size"], params)
        assert 0 <= params["send_page_offset"] < 4096 and 0 <= params["recv_page_offset"] < 4096, params


def test_the_text_and_the_report(measured):
    out, run_dir, _ = measured
    p = mpiscope("methods", run_dir.name, out=out)
    assert p.returncode == 0 and "mpiscope median" in p.stdout and "osu prints: Avg Latency(us)" in p.stdout
    html = out / "report.html"
    p = mpiscope("report", run_dir.name, "-o", html, out=out)
    assert p.returncode == 0, p.stderr
    assert "as peer tools time it" in html.read_text()


@pytest.mark.parametrize("args, needle", [
    (["--methods", "nosuchtool"], "unknown method 'nosuchtool'"),
    (["--methods", "skampi", "--bench", "bw"], "none of the benchmarks asked for"),
])
def test_bad_methods_are_refused_before_anything_runs(tmp_path, args, needle):
    p = mpiscope("run", "-n", 2, *args, out=tmp_path)
    assert p.returncode == 2 and needle in p.stderr, p.stderr
    assert run_dirs(tmp_path) == []


def test_a_run_without_methods_says_how_to_get_them(measured, tmp_path):
    run_dir, _ = run_ok("-n", 2, "--bench", "pingpong", "--sizes", "8", "--time-budget", "0.1", out=tmp_path)
    p = mpiscope("methods", run_dir.name, out=tmp_path)
    assert p.returncode == 2 and "--methods" in p.stderr


def test_every_method_the_engine_has_is_derived_or_referenced():
    from mpiscope.engine.describe import describe
    from mpiscope.methods import reference
    from mpiscope.methods.result import TOOLS
    from mpiscope.measure import method_options

    known = describe("openmpi").methods
    assert {n for n, m in known.items() if not m.reference} == set(TOOLS)
    refs = {n for n, m in known.items() if m.reference}
    assert refs == {reference.BARRIER, reference.B2B, reference.ROTATE, reference.CYCLE}
    assert refs == {method_options.REF_BARRIER, method_options.REF_B2B, method_options.REF_ROTATE,
                    method_options.REF_CYCLE}
    for m in known.values():
        for bench, traits in m.benchmarks.items():
            assert traits["timing"] in ("call", "loop") and traits["cache"] in ("warm", "cycling"), (m, bench)


@pytest.fixture(scope="module")
def exchanges(tmp_path_factory):
    out = tmp_path_factory.mktemp("exchanges")
    run_dir, _ = run_ok("-n", 2, "--bench", "reduce_scatter_block,ring,exchange", "--sizes", "1,4K",
                        "--methods", "osu,imb", "--time-budget", "0.2", out=out)
    p = mpiscope("methods", run_dir.name, "--json", out=out)
    assert p.returncode == 0, p.stderr
    return run_dir, json.loads(p.stdout)


def test_reduce_scatter_sendrecv_and_exchange_run_as_osu_and_imb_time_them(exchanges):
    run_dir, doc = exchanges
    table = read_methods(run_dir)
    got = {(m, b, s) for m, b, s in zip(table["method"].to_pylist(), table["bench"].to_pylist(),
                                        table["size"].to_pylist())}
    # OSU has no Sendrecv (the ring) or Exchange; IMB has all three; at every size asked for
    assert {(m, b, s) for m, b, s in got if m in ("osu", "imb")} == (
        {("osu", "reduce_scatter_block", s) for s in (1, 4096)}
        | {("imb", b, s) for b in ("reduce_scatter_block", "ring", "exchange") for s in (1, 4096)})

    def timed(method, bench, size, rank):
        return _rows(table, method, bench, size, rank, phase=0)

    # IMB times one loop per rank for Sendrecv and Exchange, each call for Reduce_scatter
    for bench in ("ring", "exchange"):
        assert timed("imb", bench, 4096, 1).num_rows == 1
        assert timed("imb", bench, 4096, 1)["calls"].to_pylist()[0] >= 1
    calls = [timed("imb", "reduce_scatter_block", 4096, rank).num_rows for rank in (0, 1)]
    assert calls[0] == calls[1] > 1
    # osu_reduce_scatter's loop: 1000 timed calls below 8 KiB of whole vector, 100 above (2 x 4 KiB is not above)
    assert timed("osu", "reduce_scatter_block", 4096, 0).num_rows == 1000
    tools = {(row["bench"], row["size"], t["method"]): t for row in doc["rows"] for t in row["tools"]}
    for size in (1, 4096):
        osu = tools[("reduce_scatter_block", size, "osu")]
        assert osu["params"]["tool_size"] == 2 * size and osu["printed"]["Size"] == 2 * size
        imb = tools[("reduce_scatter_block", size, "imb")]
        # IMB's Reduce_scatter: size / 4 floats to each rank, a send buffer of p blocks of at least a float
        assert imb["printed"]["t_min[usec]"] <= imb["printed"]["t_avg[usec]"] <= imb["printed"]["t_max[usec]"]
        assert imb["params"]["buffer_bytes"] == 2 * max(4, size)
        exchange = tools[("exchange", size, "imb")]
        assert exchange["params"]["buffer_bytes"] == 2 * max(4, size)  # one message for each neighbour
        t_max = exchange["printed"]["t_max[usec]"] * 1e-6
        assert math.isclose(exchange["printed"]["Mbytes/sec"], 4 * size / t_max / 1e6, rel_tol=1e-3)
