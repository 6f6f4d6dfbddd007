# SPDX-License-Identifier: BSD-3-Clause
"""bench/device/sim_validate_8hosts.sh refuses bad options and a machine with
too few cores (exit 2, nothing written), and --dry-run prints its steps;
bench/sim_validate.py refuses a --hosts outside 2..256. The cores come from
`nproc`, here a stand-in put first on PATH."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "device" / "sim_validate_8hosts.sh"


def run_script(tmp_path, cores, *args):
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    (fake / "nproc").write_text(f"#!/bin/sh\necho {cores}\n")
    (fake / "nproc").chmod(0o755)
    env = {**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"}
    env.pop("OUT", None)
    return subprocess.run(["bash", str(SCRIPT), *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)


def test_the_script_parses():
    assert subprocess.run(["bash", "-n", str(SCRIPT)], capture_output=True).returncode == 0


def test_too_few_cores_stop_it_before_anything(tmp_path):
    out = tmp_path / "out"
    p = run_script(tmp_path, 8, "--out", str(out))
    assert p.returncode == 2, p.stderr
    assert "need 16 or more" in p.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    "args, word",
    [
        (["--limit", "30"], "--limit 30"),
        (["--limit", "ten"], "--limit ten"),
        (["--presets", "fast ethernet"], "--presets"),
        (["--from", "/nonexistent-bundle"], "--from"),
        (["--frobnicate"], "unknown option"),
    ],
)
def test_bad_options_exit_2_with_the_option_named(tmp_path, args, word):
    p = run_script(tmp_path, 32, *args, "--out", str(tmp_path / "out"))
    assert p.returncode == 2
    assert word in p.stderr
    assert not (tmp_path / "out").exists()


def test_dry_run_prints_the_steps_and_does_nothing(tmp_path):
    out = tmp_path / "out"
    p = run_script(tmp_path, 16, "--dry-run", "--out", str(out), "--limit", "400", "--presets", "gige")
    assert p.returncode == 0, p.stderr
    assert f"--hosts 8 --presets gige --models drawn,shaped --p2p pingpong --json {out}/sim-validate-8.json" in p.stdout
    assert "400 s" in p.stdout
    assert not out.exists()


def test_dry_run_on_too_few_cores_says_a_run_would_stop(tmp_path):
    p = run_script(tmp_path, 4, "--dry-run")
    assert p.returncode == 0
    assert "too few" in p.stdout


@pytest.mark.parametrize("hosts", ["1", "257", "eight"])
def test_sim_validate_refuses_hosts_outside_2_to_256(tmp_path, hosts):
    p = subprocess.run(
        [sys.executable, str(REPO / "bench" / "sim_validate.py"), "--hosts", hosts, "--again", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2
    assert "--hosts" in p.stderr and "Traceback" not in p.stderr
