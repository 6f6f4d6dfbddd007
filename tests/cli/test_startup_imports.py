# SPDX-License-Identifier: BSD-3-Clause
"""What the command line imports to start (a fresh Python process each):
`mpiscope --help` and an unknown command import no command module, a command
imports its own module and no other, and none of these starts pays for a
third-party library. How long a start takes is bench/cli_startup.py's
business; these tests only guard the seams that keep it short."""

import subprocess
import sys

import pytest

from mpiscope.cli.commands import COMMANDS

HEAVY = ("numpy", "pandas", "pyarrow", "duckdb", "scipy", "matplotlib", "jinja2", "rich", "ruptures",
         "shtab", "otf2", "jsonschema")
COMMAND_MODULES = {f"mpiscope.cli.{cmd.module}" for cmd in COMMANDS.values()}

# Runs the command line in-process (output discarded), then prints every module loaded.
DRIVER = """\
import os, sys
from mpiscope.cli.main import main
out = os.dup(1)
os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stdout.flush()
os.write(out, " ".join(sorted(sys.modules)).encode())
"""


def _modules_after(argv):
    p = subprocess.run([sys.executable, "-c", DRIVER, *argv], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    return set(p.stdout.split())


def _heavy(modules):
    return sorted(m for m in modules if m.split(".")[0] in HEAVY)


@pytest.mark.parametrize("argv", [["--help"], [], ["no-such-command"]])
def test_the_listing_imports_no_command_module(argv):
    modules = _modules_after(argv)
    assert "mpiscope.cli.main" in modules
    assert sorted(modules & COMMAND_MODULES) == []
    assert _heavy(modules) == []
    assert sorted(m for m in modules if m.startswith("mpiscope.store")) == []


@pytest.mark.parametrize("argv", [["runs", "--help"], ["show", "--help"], ["export", "--help"],
                                  ["report", "--help"], ["history", "--help"], ["run", "--help"]])
def test_a_commands_help_imports_its_module_alone(argv):
    modules = _modules_after(argv)
    own = f"mpiscope.cli.{COMMANDS[argv[0]].module}"
    assert own in modules
    assert sorted(modules & COMMAND_MODULES - {own}) == []
    assert _heavy(modules) == []


def test_runs_on_an_empty_root_imports_no_library_and_no_catalog(tmp_path):
    modules = _modules_after(["runs", "--out", str(tmp_path)])
    assert "mpiscope.cli.runs" in modules
    assert _heavy(modules) == []
    assert "mpiscope.store.catalog" not in modules
