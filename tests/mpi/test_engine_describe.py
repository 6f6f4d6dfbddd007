# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope-engine --describe` (docs/reference/formats/raw-files.md): runs without a launcher,
states every benchmark's sample rule, and every series block of a real run
carries the rule, unit and timed role it states."""

import json
import shutil
import subprocess

import pytest

from mpiscope.engine import build
from mpiscope.store.rawfile import read_raw
from runcli import run_ok
from snapshot import assert_snapshot

MPIS = ["openmpi", "mpich"]


def _describe(mpi):
    if shutil.which(f"mpicc.{mpi}") is None:
        pytest.skip(f"mpicc.{mpi} is not installed")
    engine = build.ensure_engine(mpi)
    p = subprocess.run([str(engine), "--describe"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.mark.parametrize("mpi", MPIS)
def test_describe_is_one_json_object_naming_every_benchmark_once(mpi):
    d = _describe(mpi)
    assert d["describe_version"] == 1 and d["raw_schema_version"] == 3
    names = [b["name"] for b in d["benchmarks"]]
    assert len(names) == len(set(names))
    assert {"pingpong", "oneway", "multipair", "pairs", "ring", "bw", "bibw", "barrier", "allreduce",
            "flood", "overhead", "empty", "pingpong_loop"} <= set(names)
    for b in d["benchmarks"]:
        assert b["rule"] in d["rules"], b
        assert b["unit"] in ("s", "B/s") and b["pairing"] in ("first_two", "halves", "listed", "all")
        assert b["collective"] == (b["rule"] == "slowest_rank") and b["variants"], b
    by_name = {b["name"]: b for b in d["benchmarks"]}
    assert by_name["pairs"]["pairing"] == "listed" and by_name["multipair"]["pairing"] == "halves"
    assert by_name["flood"]["variant_option"] == "--queue-depths"
    assert by_name["bw"]["unit"] == "B/s" and by_name["bibw"]["rule"] == "bidirectional_bandwidth"
    colls = {c["name"]: c for c in d["collectives"]}
    assert "ring" in [a["name"] for a in colls["allreduce"]["algorithms"]]
    assert colls["bcast"]["bench"] == "bcast" and colls["reduce_scatter"]["bench"] == "reduce_scatter_block"


@pytest.mark.parametrize("mpi", MPIS)
def test_every_series_block_carries_the_described_rule(mpi, tmp_path):
    d = _describe(mpi)
    by_name = {b["name"]: b for b in d["benchmarks"]}
    run, _ = run_ok("--mpi", mpi, "-n", 2, "--bench", "pingpong,oneway,bibw,allreduce", "--sizes", 8,
                    "--reps-max", 20, out=tmp_path)
    seen = set()
    for path in sorted((run / "raw").glob("launch-*/rank-*.raw")):
        raw = read_raw(path)
        assert raw.header["schema_version"] == d["raw_schema_version"]
        for block in raw.blocks:
            meta = block.meta
            if meta.get("kind") != "series":
                continue
            want = by_name[meta["bench"]]
            assert meta["rule"] == want["rule"] and meta["unit"] == want["unit"], meta
            assert meta["timed_role"] == ("member" if want["collective"] else "initiator"), meta
            seen.add(meta["bench"])
        after = [b.meta for b in raw.blocks if b.meta.get("kind") == "sync"][-1]
        assert after["phase"] == "after" and after["t_first_local_s"] <= after["t_last_local_s"]
    assert seen == {"pingpong", "oneway", "bibw", "allreduce"}


def test_the_stored_description_is_the_engines():
    """The copy the unit tests' synthetic runs read (tests/rawgen.py) is what
    the engine says now; MPISCOPE_UPDATE_SNAPSHOTS=1 renews it."""
    assert_snapshot("engine-describe.json", json.dumps(_describe("openmpi"), indent=1) + "\n")
