# SPDX-License-Identifier: BSD-3-Clause
"""`export` (views/export.py) of synthetic runs to CSV and JSON: every sample,
no NaN in JSON, a run with no rows, an unknown format refused."""

import csv
import io
import json

import pytest

from mpiscope.common.errors import UsageError
from mpiscope.views.exporters import export
from mpiscope.store.ingest import ingest
from rawgen import RunBuilder, SeriesSpec, context_for


def test_csv(demo):
    _, run_dir, rb = demo
    rows = list(csv.DictReader(io.StringIO(export(run_dir, "csv").text)))
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
    _, run_dir, _ = demo
    doc = json.loads(export(run_dir, "json").text)
    assert doc["schema_version"] == 1
    assert doc["context"]["run_id"] == run_dir.name
    assert doc["context"]["series"][0]["bench"] == "pingpong"
    assert doc["rows"][0]["bench"] == "pingpong" and doc["rows"][0]["n"] == 5


def test_json_has_no_nan(tmp_path):
    rb = RunBuilder(tmp_path / "run", nranks=2)
    rb.add(SeriesSpec("allreduce", 8, [1e-6], late=((1, 0),)))  # no valid sample
    rb.write()
    ingest(rb.run_dir, context_for())
    text = export(rb.run_dir, "json").text
    assert "NaN" not in text
    row = json.loads(text)["rows"][0]
    assert row["n"] == 0 and row["invalid"] == 1 and row["median"] is None


def test_zero_row_run(tmp_path):
    ingest(tmp_path, context_for(status="failed"))
    with pytest.raises(UsageError, match="did not measure it; it has none"):
        export(tmp_path, "osu", "pingpong")
    assert export(tmp_path, "csv").text == "bench,algo,size,launch,rep,source,value,unit\n"
    assert json.loads(export(tmp_path, "json").text)["rows"] == []


def test_unknown_format(demo):
    with pytest.raises(UsageError, match="csv, json, osu"):
        export(demo[1], "xml")
