# SPDX-License-Identifier: BSD-3-Clause
"""A rank that dies mid-run: the run is kept, marked failed, and what was
measured before the crash is readable."""

import json

from mpiscope.store import samples

from mpiscope.store import ingest as store
from runcli import mpiscope


def test_aborted_rank_leaves_a_failed_readable_run(tmp_path):
    p = mpiscope("run", "-n", 2, "--bench", "pingpong,allreduce", "--sizes", "8,1K", "--reps-max", 50,
                 out=tmp_path, env={"MPISCOPE_TEST_ABORT_AFTER": "2", "MPISCOPE_TEST_ABORT_RANK": "1"})
    assert p.returncode == 1, p.stderr
    assert "run failed" in p.stderr
    runs = [d for d in tmp_path.iterdir() if d.is_dir()]
    assert len(runs) == 1 and not runs[0].name.startswith(".")
    table, loaded = store.load(runs[0])
    ctx = loaded.context
    assert ctx["status"] == "failed" and "exited with code" in ctx["error"]
    assert json.loads((runs[0] / "context.json").read_text())["status"] == "failed"
    # The two series completed before the abort are there, from both ranks.
    for size in (8, 1024):
        assert len(samples.sample_values(table, "pingpong", size)) > 0
    assert set(table["bench"].to_pylist()) == {"pingpong"}
    assert [0, 1] in ctx["incomplete_ranks"]
    # The views work on it and say it failed.
    shown = mpiscope("show", runs[0].name, out=tmp_path)
    assert shown.returncode == 0 and "failed" in shown.stdout
    listed = mpiscope("runs", out=tmp_path)
    assert runs[0].name in listed.stdout and "failed" in listed.stdout
