# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope history` on two real 2-rank runs, the second with a setting the
MPI library reads: the runs store the machine, the hosts and every series'
median with its interval, and `history --check` names the setting that
changed between them."""

import json
import time

from runcli import mpiscope
from schemas import validate

SETTING = "OMPI_MCA_btl_vader_single_copy_mechanism"


def _run(out, env=None):
    p = mpiscope("run", "-n", "2", "--bench", "pingpong", "--sizes", "8", "--reps-min", "20",
                 "--reps-max", "200", "--json", out=out, env=env)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)["run_dir"]


def test_history_of_two_real_runs_names_the_setting_that_changed(tmp_path):
    first = _run(tmp_path)
    # History orders runs by their creation time, kept to the second: the second run starts in a later one.
    time.sleep(1.05 - time.time() % 1)
    _run(tmp_path, env={SETTING: "none"})
    context = json.loads((tmp_path / first.split("/")[-1] / "context.json").read_text())
    assert context["hosts"] and sum(context["hosts"].values()) == 2
    assert context["machine"]["kernel"] and len(context["machine"]["engine_sha256"]) == 16
    assert any(name.startswith("libmpi") for name in context["machine"]["libraries"])
    quality = json.loads((tmp_path / first.split("/")[-1] / "quality.json").read_text())
    (series,) = quality["series"]
    assert series["ci_low"] <= series["median"] <= series["ci_high"]

    p = mpiscope("history", tmp_path, "--check", "--json")
    assert p.returncode in (0, 5), p.stderr   # 5 if the setting made the newest run slower
    doc = json.loads(p.stdout)
    validate("history", doc)
    (entry,) = doc["series"]
    assert len(entry["runs"]) == 2 and entry["runs"][0]["median"] == series["median"]
    assert {"what": f"${SETTING}", "before": "unset", "after": "none"} in entry["check"]["changed"]
    assert (p.returncode == 5) == (entry["check"]["status"] == "regression")
