# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope sim whatif` on a real traced profile: a small MPI application
(tests/data/whatif_steps.c) on 2 ranks of Open MPI, costs from a pingpong
run on the same machine. At its own 2 ranks it states the simulated time in
communication against what the trace measured (how close they come depends
on the machine's load; bench/app_loop.py measures it); at 8 ranks it runs and
gives intervals over replicates whose message times are drawn from the
pingpong's distributions."""

import json
import shutil
import subprocess
from pathlib import Path

import jsonschema
import pytest

from runcli import mpiscope, run_ok

DATA = Path(__file__).resolve().parents[1] / "data"
SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "schemas" / "sim-whatif.schema.json"
LAUNCH = ["mpirun.openmpi", "-n", "2", "--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]


@pytest.mark.skipif(shutil.which("mpicc.openmpi") is None, reason="Open MPI is not installed (make setup)")
def test_whatif_of_a_traced_application(tmp_path):
    program = tmp_path / "whatif-steps"
    subprocess.run(["mpicc.openmpi", "-O2", "-o", program, DATA / "whatif_steps.c"], check=True)
    out = tmp_path / "runs"
    p = mpiscope("profile", "--out", out, "--mpi", "openmpi", "--trace", "--json", "--", *LAUNCH, program,
                 timeout=300)
    assert p.returncode == 0, p.stderr
    traced = json.loads(p.stdout)["run_id"]
    pingpong, _ = run_ok("-n", 2, "--bench", "pingpong", "--sizes", "8,1K,16K,64K,128K", "--time-budget", "0.5",
                         out=out)
    tune = tmp_path / "tune"
    tune.mkdir()
    (tune / "tune.json").write_text(json.dumps({
        "library": "openmpi", "version": "4.1.4", "p": 2, "ps": [2],
        "rules": {"allreduce": {"2": [{"start": 0, "algorithm": "ring"}]}},
        "default_runs": [{"collective": "allreduce", "p": 2, "size": 32, "algorithm": "recursive_doubling",
                          "as_forced": True}],
        "verification": {"cells": []}}))
    p = mpiscope("sim", "whatif", "--from-trace", traced, "--tune", tune, "-p", 8, "--from-run", pingpong.name,
                 "--sample", "--replicates", 5, "--json", out=out, timeout=600)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, json.loads(SCHEMA.read_text()), cls=jsonschema.Draft202012Validator)
    print(f"\ntraced {doc['traced_comm_s'] * 1e3:.2f} ms, simulated "
          f"{doc['validation']['default']['median_s'] * 1e3:.2f} ms at 2 ranks: error {100 * doc['error']:+.1f}%")
    simulated = doc["validation"]["default"]["median_s"]
    assert doc["traced_comm_s"] > 0 and simulated > 0
    assert doc["error"] == pytest.approx(simulated / doc["traced_comm_s"] - 1)
    (at8,) = doc["points"]
    assert at8["p"] == 8 and at8["nops"] > 4 * doc["validation"]["nops"]
    for which in ("default", "tuned"):
        span = at8[which]
        assert 0 < span["low_s"] < span["high_s"] and span["low_s"] <= span["median_s"] <= span["high_s"]
    picks = {(s["p"], s["ours_default"], s["ours_tuned"]) for s in doc["selections"]}
    assert (8, "recursive_doubling", "ring") in picks
