import csv
import io
import json
import math

import pytest

from mpiscope.common.errors import UsageError
from mpiscope.views.export import export, osu_value
from mpiscope.store.ingest import ingest
from rawgen import Clock, RunBuilder, SeriesSpec, build_demo_run, context_for
from snapshot import assert_snapshot


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    run_dir, rb = build_demo_run(out)
    return run_dir, rb


def test_osu_snapshot(demo):
    run_dir, _ = demo
    assert_snapshot("osu.txt", export(run_dir, "osu"))


def test_osu_layout_matches_omb_7_4(demo):
    """The exact strings OMB 7.4 prints (FIELD_WIDTH 18, FLOAT_PRECISION 2)."""
    lines = export(run_dir := demo[0], "osu").split("\n")
    assert lines[0] == ""  # print_preamble starts with a newline
    assert lines[1] == "# OSU MPI Latency Test v7.4"
    assert lines[2] == "# Datatype: MPI_BYTE."
    assert lines[3] == "# Size       Avg Latency(us)"
    assert lines[4] == "0                       0.20"        # "%-10d%18.2f"
    assert "# Size      Bandwidth (MB/s)" in lines
    assert "# OSU MPI Bi-Directional Bandwidth Test v7.4" in lines
    # osu_barrier: no size column, "%17.2f".
    i = lines.index("# OSU MPI Barrier Latency Test v7.4")
    assert lines[i + 1] == "# Avg Latency(us)"
    assert lines[i + 2] == "             0.92"
    assert "# mpiscope oneway (OSU layout)" in lines
    assert run_dir.exists()


def test_osu_value_is_a_mean():
    assert osu_value("s", [1e-6, 2e-6, 6e-6]) == pytest.approx(3.0)
    # bw: total bytes / total time = harmonic mean of the bandwidths, in MB/s.
    assert osu_value("B/s", [1e9, 3e9]) == pytest.approx(1500.0)
    assert math.isnan(osu_value("B/s", []))


def test_osu_other_algorithm_and_launches(tmp_path):
    rb = RunBuilder(tmp_path / "run", nranks=2, clocks={1: Clock(0.5)}, launches=(0, 1))
    rb.add(SeriesSpec("allreduce", 8, [1e-6, 3e-6], launches=(0, 1)))
    rb.add(SeriesSpec("allreduce", 8, [5e-6], algo="ring"))
    rb.write()
    ingest(rb.run_dir, context_for())
    text = export(rb.run_dir, "osu")
    assert text == ("\n# OSU MPI Allreduce Latency Test v7.4\n# Datatype: MPI_BYTE.\n"
                    "# Size       Avg Latency(us)\n8                       2.00\n"
                    "\n# mpiscope allreduce/ring (OSU layout)\n# Datatype: MPI_BYTE.\n"
                    "# Size       Avg Latency(us)\n8                       5.00\n")


def test_csv(demo):
    run_dir, rb = demo
    rows = list(csv.DictReader(io.StringIO(export(run_dir, "csv"))))
    n_valid = sum(1 for e in rb.expected.values() for _, ok in e.samples.values() if ok)
    assert len(rows) == n_valid
    assert list(rows[0]) == ["bench", "algo", "size", "launch", "rep", "source", "value", "unit"]
    first = rows[0]
    assert (first["bench"], first["size"], first["source"], first["unit"]) == \
        ("pingpong", "0", "0->1", "s")
    assert float(first["value"]) == pytest.approx(0.19e-6, rel=1e-6)
    bw = [r for r in rows if r["bench"] == "bw"]
    assert {r["unit"] for r in bw} == {"B/s"}
    ring = [r for r in rows if r["bench"] == "ring"]
    assert {r["source"] for r in ring} == {"3"}


def test_json(demo):
    run_dir, _ = demo
    doc = json.loads(export(run_dir, "json"))
    assert doc["schema_version"] == 1
    assert doc["context"]["run_id"] == run_dir.name
    assert doc["context"]["series"][0]["bench"] == "pingpong"
    assert doc["rows"][0]["bench"] == "pingpong" and doc["rows"][0]["n"] == 5


def test_json_has_no_nan(tmp_path):
    rb = RunBuilder(tmp_path / "run", nranks=2)
    rb.add(SeriesSpec("allreduce", 8, [1e-6], late=((1, 0),)))  # no valid sample
    rb.write()
    ingest(rb.run_dir, context_for())
    text = export(rb.run_dir, "json")
    assert "NaN" not in text
    row = json.loads(text)["rows"][0]
    assert row["n"] == 0 and row["invalid"] == 1 and row["median"] is None


def test_zero_row_run(tmp_path):
    ingest(tmp_path, context_for(status="failed"))
    assert export(tmp_path, "osu") == ""
    assert export(tmp_path, "csv") == "bench,algo,size,launch,rep,source,value,unit\n"
    assert json.loads(export(tmp_path, "json"))["rows"] == []


def test_unknown_format(demo):
    with pytest.raises(UsageError, match="csv, json, osu"):
        export(demo[0], "xml")
