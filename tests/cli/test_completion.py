# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope completion bash|zsh`: the scripts load in their shells and
complete commands, options, choices and run ids."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from mpiscope.cli.completion import RUN_PREAMBLE
from rawgen import context_for
from runcli import mpiscope

IDS = ("20240301-090000-aaaa", "20240302-090000-bbbb")


@pytest.fixture
def shell_env(tmp_path):
    """An `mpiscope` on PATH running this source tree, a root with two runs,
    and no configuration from the machine."""
    bin_dir, out = tmp_path / "bin", tmp_path / "runs"
    bin_dir.mkdir()
    script = bin_dir / "mpiscope"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} -m mpiscope.cli "$@"\n')
    script.chmod(0o755)
    for run_id in IDS:
        (out / run_id).mkdir(parents=True)
        (out / run_id / "context.json").write_text(json.dumps(context_for(run_id=run_id)))
    (out / ".20240303-000000-cccc.partial").mkdir()  # being written: not offered
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}",
           "XDG_CONFIG_HOME": str(tmp_path / "config"), "MPISCOPE_OUT": "", "MPISCOPE_CONFIG": ""}
    return env, out, tmp_path


def _bash_complete(env, cwd, script, *words):
    """COMPREPLY for the command line `words` (the last one being completed)."""
    driver = (f"source {script}\n"
              "COMP_WORDS=(\"$@\"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=()\n"
              "_shtab_mpiscope\n"
              "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
    p = subprocess.run(["bash", "-c", driver, "bash", *words], capture_output=True, text=True,
                       env=env, cwd=cwd, timeout=120)
    assert p.returncode == 0, p.stderr
    return [line for line in p.stdout.splitlines() if line]


@pytest.fixture
def bash_script(shell_env):
    env, _, tmp = shell_env
    p = mpiscope("completion", "bash", env=env)
    assert p.returncode == 0, p.stderr
    path = tmp / "mpiscope.bash"
    path.write_text(p.stdout)
    return path


def test_bash_completes_commands_options_and_choices(shell_env, bash_script):
    env, _, tmp = shell_env
    commands = _bash_complete(env, tmp, bash_script, "mpiscope", "")
    assert {"run", "runs", "show", "model", "timechart", "config", "completion"} <= set(commands)
    assert set(_bash_complete(env, tmp, bash_script, "mpiscope", "run", "--ex")) == {"--exclude"}
    assert set(_bash_complete(env, tmp, bash_script, "mpiscope", "run", "--mpi", "")) == \
        {"openmpi", "mpich"}
    assert _bash_complete(env, tmp, bash_script, "mpiscope", "runs", "") == ["rm", "ingest"]
    assert set(_bash_complete(env, tmp, bash_script, "mpiscope", "completion", "")) == {"bash", "zsh"}


def test_bash_completes_run_ids(shell_env, bash_script):
    env, out, tmp = shell_env
    # From --out on the line.
    assert _bash_complete(env, tmp, bash_script, "mpiscope", "show", "--out", str(out), "") == \
        ["latest", *IDS]
    assert _bash_complete(env, tmp, bash_script, "mpiscope", "runs", "rm", f"--out={out}",
                          "20240302") == [IDS[1]]
    # From MPISCOPE_OUT, through `mpiscope config get out`.
    assert _bash_complete({**env, "MPISCOPE_OUT": str(out)}, tmp, bash_script, "mpiscope",
                          "compare", IDS[0], "") == ["latest", *IDS]
    # From a project file, in the directory where completion happens.
    (tmp / "mpiscope.toml").write_text(f'out = "{out}"\n')
    assert _bash_complete(env, tmp, bash_script, "mpiscope", "report", "") == ["latest", *IDS]
    (tmp / "mpiscope.toml").unlink()
    assert _bash_complete(env, tmp, bash_script, "mpiscope", "show", "") == ["latest"]


def _zsh():
    zsh = shutil.which("zsh")
    assert zsh, "zsh is needed for this test (scripts/setup-system.sh installs it)"
    return zsh


def test_zsh_script_parses_and_binds_run_ids(shell_env):
    env, _, tmp = shell_env
    p = mpiscope("completion", "zsh", env=env)
    assert p.returncode == 0, p.stderr
    path = tmp / "_mpiscope"
    path.write_text(p.stdout)
    check = subprocess.run([_zsh(), "-n", str(path)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert p.stdout.startswith("#compdef mpiscope")
    assert ":_mpiscope_run_ids" in p.stdout and "--exclude" in p.stdout and "(openmpi mpich)" in p.stdout


def test_zsh_run_id_function(shell_env):
    env, out, tmp = shell_env
    driver = (RUN_PREAMBLE["zsh"] + "\ncompadd() { [[ $1 == -a ]] && print -l -- ${(P)2} }\n"
              "words=(\"$@\"); _mpiscope_run_ids\n")
    run = lambda *words, e=env: subprocess.run(  # noqa: E731
        [_zsh(), "-f", "-c", driver, "zsh", *words], capture_output=True, text=True, env=e,
        cwd=tmp, timeout=120)
    p = run("mpiscope", "show", "--out", str(out), "")
    assert p.returncode == 0 and p.stdout.split() == ["latest", *IDS], p.stderr
    p = run("mpiscope", "show", "", e={**env, "MPISCOPE_OUT": str(out)})
    assert p.stdout.split() == ["latest", *IDS], p.stderr
