# SPDX-License-Identifier: BSD-3-Clause
"""Quality verdicts of a real 2-rank Open MPI run of 3 repetitions (too few
for a median's CI): stored with the run, in `run --json`'s summary, and
warned once per kind."""

import json
from pathlib import Path

from mpiscope.store.layout import QUALITY_FILE
from runcli import mpiscope


def test_run_stores_verdicts_and_warns_once_per_kind(tmp_path):
    """A real run of 3 repetitions: too few for a median's CI."""
    p = mpiscope("run", "-n", "2", "--bench", "pingpong", "--sizes", "8,64", "--reps-min", "3",
                 "--reps-max", "3", "--json", out=tmp_path)
    assert p.returncode == 0, p.stderr
    summary = json.loads(p.stdout)
    stored = json.loads((Path(summary["run_dir"]) / QUALITY_FILE).read_text())
    assert [(d["size"], d["n"] <= 3, "few_samples" in d["flags"]) for d in stored["series"]] == \
        [(8, True, True), (64, True, True)]
    assert summary["quality"]["warnings"][0].startswith("2 of 2 series: fewer than 6 valid samples")
    assert "mpiscope: warning: 2 of 2 series: fewer than 6 valid samples" in p.stderr
    assert p.stderr.count("fewer than 6 valid samples") == 1
