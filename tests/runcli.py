# SPDX-License-Identifier: BSD-3-Clause
"""Runs the real `mpiscope` CLI in a subprocess, as a user would."""

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema


def mpiscope(*args, out=None, env=None, timeout=600, cwd=None):
    cmd = [sys.executable, "-m", "mpiscope.cli", *map(str, args)]
    if out is not None:
        cmd += ["--out", str(out)]
    full_env = dict(os.environ)
    full_env.pop("MPISCOPE_PROGRESS", None)
    full_env.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=full_env, cwd=cwd)


def run_ok(*args, out, env=None):
    """`mpiscope run ... --json`; asserts success and returns (run dir, summary)."""
    p = mpiscope("run", *args, "--json", out=out, env=env)
    assert p.returncode == 0, f"exit {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    summary = json.loads(p.stdout)
    # Every real run's summary is held to the schema of the show document.
    schema = json.loads((Path(__file__).resolve().parent.parent / "docs" / "schemas" /
                         "show.schema.json").read_text())
    jsonschema.validate(summary, schema, cls=jsonschema.Draft202012Validator)
    return Path(summary["run_dir"]), summary


def run_dirs(out):
    """Every entry under the output root that is, or is becoming, a run."""
    out = Path(out)
    if not out.exists():
        return []
    return [p for p in out.iterdir() if p.is_dir()]
