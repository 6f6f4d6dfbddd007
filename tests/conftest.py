# SPDX-License-Identifier: BSD-3-Clause
"""Shared by every test: the helpers in this folder (rawgen, runcli, …)
import from any subfolder (unit/, cli/, mpi/, cluster/, apps/), and the
fixtures tests of more than one subfolder use."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))


@pytest.fixture
def traced_app(tmp_path):
    """A synthetic traced profile of 4 ranks (app_traced.py), for unit/ and cli/."""
    from app_traced import write_run

    return write_run(tmp_path / "prof")


@pytest.fixture
def app_tune(tmp_path):
    """A tune directory with rules for 2 and 4 ranks (app_traced.py)."""
    from app_traced import write_mixed_tune

    return write_mixed_tune(tmp_path / "tune")


@pytest.fixture
def clean_env(tmp_path, monkeypatch):
    """No config file nor MPISCOPE_OUT from the machine running the tests:
    the user file is looked for under tmp/home, the project file in tmp/work."""
    home, work = tmp_path / "home", tmp_path / "work"
    (home / "mpiscope").mkdir(parents=True)
    work.mkdir()
    for var in ("MPISCOPE_OUT", "MPISCOPE_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home))
    monkeypatch.chdir(work)
    return {"user": home / "mpiscope" / "config.toml", "project": work / "mpiscope.toml",
            "work": work, "env": {"XDG_CONFIG_HOME": str(home), "MPISCOPE_OUT": "",
                                  "MPISCOPE_CONFIG": ""}}
