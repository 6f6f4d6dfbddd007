# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope run` on real Open MPI ranks with its defaults from the project
file (np, sync, time budget, exclude, out) and a label, stored, listed and
shown by it; the command line wins over the file."""

import json

from runcli import mpiscope


def test_run_takes_defaults_from_the_project_file_and_stores_its_label(clean_env):
    work = clean_env["work"]
    clean_env["project"].write_text('out = "from-project"\n[run]\nnp = 2\nsync = "barrier"\n'
                                    'time-budget = 0.3\nexclude = "bw"\n')
    p = mpiscope("run", "--bench", "pingpong,bw", "--sizes", 8, "--reps-max", 20,
                 "--label", "first try", "--json", cwd=work, env=clean_env["env"])
    assert p.returncode == 0, p.stderr
    run = json.loads(p.stdout)["run_dir"]
    ctx = json.loads((work / run / "context.json").read_text())
    assert (work / run).parent == work / "from-project"
    assert ctx["np"] == 2 and ctx["benches"] == ["pingpong"]
    assert ctx["plan"]["sync"] == "barrier" and ctx["plan"]["time_budget"] == 0.3
    assert ctx["label"] == "first try"
    listing = mpiscope("runs", cwd=work, env=clean_env["env"])
    assert "first try" in listing.stdout and listing.stdout.split()[:4] == \
        ["run_id", "created", "status", "label"]
    shown = mpiscope("show", "first try", cwd=work, env=clean_env["env"])
    assert shown.returncode == 0 and "pingpong" in shown.stdout, shown.stderr
    # The command line wins over the file.
    p = mpiscope("run", "--bench", "pingpong", "--sizes", 8, "--reps-max", 20, "--sync", "window",
                 "--out", "from-cli", "--json", cwd=work, env=clean_env["env"])
    assert p.returncode == 0, p.stderr
    ctx = json.loads((work / json.loads(p.stdout)["run_dir"] / "context.json").read_text())
    assert ctx["plan"]["sync"] == "window" and (work / "from-cli").is_dir()
