# SPDX-License-Identifier: BSD-3-Clause
"""Malformed input refused once the MPI library was asked (bad_inputs.py,
ASKS_MPI: its compiler wrapper run, the engine's description read, the
simulator built), a sample of every kind of case as real `mpiscope`
processes, and the rank limit: exit code 2 and one line naming the input and
the fix, no traceback, nothing created under --out, no rank started."""

import pytest

from bad_inputs import ASKS_MPI, CASES, RUN, argv_env, refused_cleanly, refused_in_process, set_case_env, \
    stored_runs, tree
from mpiscope.cli.main import main
from runcli import mpiscope

ASKING = [c for c in CASES if c[0] in ASKS_MPI]

# The same refusals as real processes, a sample across the commands.
SUBPROCESS_SAMPLE = ("np-beyond-slots", "bench-empty", "hostfile-garbage", "runs-rm-empty-ref",
                     "time-budget-negative", "show-unknown", "up-newline", "machine-not-json",
                     "config-bad-toml", "runs-ingest-no-raw")


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return stored_runs(tmp_path_factory.mktemp("root") / "runs")


@pytest.mark.parametrize("argv, needles", [c[1:] for c in ASKING], ids=[c[0] for c in ASKING])
def test_bad_input_is_refused_cleanly(argv, needles, tmp_path, root, monkeypatch, capsys):
    refused_in_process(argv, needles, tmp_path, root, monkeypatch, capsys)


@pytest.mark.parametrize("case", SUBPROCESS_SAMPLE)
def test_the_real_process_refuses_alike(case, tmp_path, root):
    argv, needles = {c[0]: c[1:] for c in CASES}[case]
    words, env, _ = argv_env(argv, tmp_path, root)
    full = {**env, "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    before = tree(root)
    p = mpiscope(*words, env=full, cwd=tmp_path, timeout=120)
    refused_cleanly(p.returncode, p.stderr, needles, tmp_path / "fresh", before, root)


@pytest.mark.parametrize("argv, accepted", [
    (["-n", "32"], True),                                   # 16 ranks a slot on 2 CPUs
    (["-n", "33"], False),
    (["-n", "64", "--hostfile", "{ok_hosts}"], True),       # 4 slots
    (["-n", "65", "--hostfile", "{ok_hosts}"], False),
    (["-n", "1000", "--launcher-args", "--host a:500,b:500"], True),  # the user places them
    (["-n", "1000", "--launcher", "srun"], True),           # the allocation decides
])
def test_the_rank_limit_refuses_only_counts_far_beyond_the_slots(argv, accepted, tmp_path, root,
                                                                monkeypatch, capsys):
    from mpiscope.measure import placement

    monkeypatch.setattr(placement, "local_cpus", lambda: 2)
    words, env, _ = argv_env([*RUN, *argv, "--dry-run"], tmp_path, root)
    set_case_env(monkeypatch, tmp_path, env)
    code = main(words)
    err = capsys.readouterr().err
    assert (code == 0) == accepted, err
    if not accepted:
        assert "more than 16 ranks a slot" in err and "slot(s)" in err
    assert not (tmp_path / "fresh").exists()
