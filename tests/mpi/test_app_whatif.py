# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope app compare --profile --tune --whatif-p --from-run` end to end
on a small MPI application (tests/data/whatif_steps.c, 2 ranks of Open
MPI): its traced profile, a pingpong run for the costs, a tune directory
whose rule changes the allreduce; the run stores the prediction and the
what-if at 4 ranks in app.json (validated against the schema), `show`
prints the what-if, and `mpiscope report` of the run writes the page with
every part. Run under `flock /tmp/mpiscope-mpi.lock`."""

import json
import re
import subprocess
from pathlib import Path

import jsonschema
import pytest

from runcli import mpiscope, run_ok

DATA = Path(__file__).resolve().parents[1] / "data"
SCHEMAS = Path(__file__).resolve().parents[2] / "docs" / "schemas"
LAUNCH = ["mpirun.openmpi", "-n", "2", "--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("whatif-app")
    program = d / "whatif-steps"
    subprocess.run(["mpicc.openmpi", "-O2", "-o", program, DATA / "whatif_steps.c"], check=True)
    out = d / "runs"
    p = mpiscope("profile", "--out", out, "--mpi", "openmpi", "--trace", "--label", "steps", "--json", "--",
                 *LAUNCH, program, timeout=300)
    assert p.returncode == 0, p.stderr
    run_ok("-n", 2, "--bench", "pingpong", "--sizes", "8,1K,16K,64K", "--time-budget", "0.3", "--label", "pp",
           out=out)
    tune = d / "tune"
    tune.mkdir()
    (tune / "tune.json").write_text(json.dumps({
        "library": "openmpi", "version": "4.1.4", "p": 2, "ps": [2],
        "rules": {"allreduce": {"2": [{"start": 0, "algorithm": "ring"}]}},
        "default_runs": [{"collective": "allreduce", "p": 2, "size": 32, "algorithm": "recursive_doubling",
                          "as_forced": True}],
        "verification": {"cells": [{"collective": "allreduce", "p": 2, "size": 32, "rule": "ring", "speedup": 1.2,
                                    "speedup_low": 1.1, "speedup_high": 1.3, "verdict": "tuned faster"}]}}))
    (tune / "env.sh").write_text("export OMPI_MCA_coll_tuned_use_dynamic_rules=1\n"
                                 "export OMPI_MCA_coll_tuned_allreduce_algorithm=4\n")
    return d, out, program, tune


def test_the_whatif_is_stored_shown_and_reported(work, tmp_path):
    d, out, program, tune = work
    p = mpiscope("app", "compare", "--out", out, "--mpi", "openmpi", "--profile", "steps", "--tune", tune,
                 "--whatif-p", 4, "--from-run", "pp", "--replicates", 3, "--warmup", 0, "--min-rounds", 2,
                 "--max-rounds", 2, "--json", "--", *LAUNCH, program, timeout=900)
    assert p.returncode == 0, f"{p.stdout[-2000:]}\n{p.stderr[-3000:]}"
    doc = json.loads(p.stdout)
    jsonschema.validate(doc, json.loads((SCHEMAS / "app.schema.json").read_text()),
                        cls=jsonschema.Draft202012Validator)
    w = doc["whatif"]
    jsonschema.validate(w, json.loads((SCHEMAS / "sim-whatif.schema.json").read_text()),
                        cls=jsonschema.Draft202012Validator)
    assert w["traced_p"] == 2 and [x["p"] for x in w["points"]] == [4] and w["replicates"] == 3
    assert w["tune"] == str(tune.resolve())
    assert doc["prediction"]["config"] == "tuned" and doc["prediction"]["speedup"] >= 1
    shown = mpiscope("show", doc["run_id"], "--out", out)
    assert shown.returncode == 0 and "what-if at scale" in shown.stdout and "4 ranks:" in shown.stdout

    report = tmp_path / "app.html"
    r = mpiscope("report", doc["run_id"], "--out", out, "-o", report)
    assert r.returncode == 0, r.stderr
    html = report.read_text()
    assert {"app-answer", "app-prediction", "app-whatif", "profile-1"} <= set(re.findall(r'<section id="([^"]+)"', html))
    # The fixture's tune.json holds what the prediction reads, not a whole tune result: named, not shown.
    assert "is not a whole result of <code>mpiscope tune</code>" in html


def _results(out):
    """The output root's entries but the catalog's, an index refreshed whenever runs are read."""
    return sorted(p.name for p in out.iterdir() if not p.name.lstrip(".").startswith("catalog"))


def test_bad_whatif_options_stop_before_any_launch(work, tmp_path):
    d, out, program, tune = work
    cases = [(("--whatif-p", 4), "--whatif-p needs"),                              # no --from-run
             (("--from-run", "pp"), "give --whatif-p"),                            # --from-run alone
             (("--whatif-p", 3, "--from-run", "pp"), "multiples of 2"),            # not a multiple of the traced 2
             (("--whatif-p", "4,x", "--from-run", "pp"), "distinct ones"),
             (("--whatif-p", 4, "--from-run", "steps"), "pingpong"),               # a profile has no pingpong
             (("--p2p", "ring"), "--p2p gives the costs"),                         # --p2p alone
             (("--whatif-p", 4, "--from-run", "pp", "--p2p", "ring"), "no ring")]  # the run has no ring
    before = _results(out)
    for extra, message in cases:
        p = mpiscope("app", "compare", "--out", out, "--mpi", "openmpi", "--profile", "steps", "--tune", tune,
                     *extra, "--", *LAUNCH, program)
        assert p.returncode == 2 and message in p.stderr, (extra, p.stderr)
        assert p.stderr.splitlines()[-1].startswith("mpiscope: error: ")
    assert _results(out) == before   # nothing written, nothing launched
