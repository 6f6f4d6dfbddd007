# SPDX-License-Identifier: BSD-3-Clause
"""What the command line imports to start (a fresh Python process each):
`mpiscope --help` and an unknown command import no command module, a command
imports its own module and no other, and none of these starts pays for a
third-party library, nor do `runs` and `show` of stored runs (they read the
listing kept beside the catalog and the rows kept in the run). How long a
start takes is bench/cli_startup.py's business; these tests only guard the
seams that keep it short."""

import os
import subprocess
import sys
import time

import pytest

from mpiscope.cli.commands import COMMANDS

HEAVY = (
    "numpy",
    "pandas",
    "pyarrow",
    "duckdb",
    "scipy",
    "matplotlib",
    "jinja2",
    "rich",
    "ruptures",
    "shtab",
    "otf2",
    "jsonschema",
)
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


@pytest.mark.parametrize(
    "argv",
    [
        ["runs", "--help"],
        ["show", "--help"],
        ["export", "--help"],
        ["report", "--help"],
        ["history", "--help"],
        ["run", "--help"],
    ],
)
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


@pytest.fixture(scope="module")
def stored_run(tmp_path_factory):
    """A stored run as `mpiscope run` leaves it (show's rows kept in the run),
    listed once (the listing kept beside the catalog)."""
    from mpiscope.store import catalog
    from mpiscope.views import show_cache
    from rawgen import build_demo_run

    out = tmp_path_factory.mktemp("runs")
    run_dir = build_demo_run(out)[0]
    then = time.time() - 60  # the catalog trusts the stamps of files older than dir_stamps.RACY_S
    os.utime(run_dir / "context.json", (then, then))
    show_cache.keep(run_dir, show_cache.computed(run_dir).rows)
    catalog.list_runs(out)
    return out, run_dir


def test_runs_of_stored_runs_imports_no_library(stored_run):
    out, run_dir = stored_run
    modules = _modules_after(["runs", "--out", str(out)])
    assert "mpiscope.store.listing" in modules
    assert _heavy(modules) == []
    assert "mpiscope.store.catalog" not in modules


@pytest.mark.parametrize("how", [[], ["--json"], ["latest"], ["RUN_DIR"]])
def test_show_of_a_stored_run_imports_no_library(stored_run, how):
    out, run_dir = stored_run
    argv = ["show", "--out", str(out), *(str(run_dir) if a == "RUN_DIR" else a for a in how)]
    modules = _modules_after(argv)
    assert "mpiscope.views.show_cache" in modules
    assert _heavy(modules) == []


def test_a_refused_app_compare_imports_no_scipy(tmp_path):
    # its options are checked before the measurement's modules are imported; a tune's
    # directory is read by tune/result_file.py, not with the tuner
    tune = tmp_path / "tune"
    tune.mkdir()
    (tune / "tune.json").write_text('{"schema_version": 1, "library": "openmpi", "rules": {}}')
    modules = _modules_after(["app", "compare", "--out", str(tmp_path), "--noise", "2%", "--whatif-p", "4",
                              "--tune", str(tune), "--", "mpirun", "-n", "2", "true"])
    assert "mpiscope.cli.app" in modules and "mpiscope.cli.percent" in modules
    assert "mpiscope.tune.result_file" in modules and "mpiscope.tune.verdicts" not in modules
    assert "scipy" not in modules and "mpiscope.app.compare" not in modules


def test_the_version_is_read_without_importlib_metadata():
    # `run` names its engine build and its context by the version before the launch
    code = (
        "import sys\nfrom mpiscope.common.version import version\nfrom mpiscope.measure import machine\n"
        "print(version() == machine.mpiscope_version() != None, 'importlib.metadata' in sys.modules)"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["True", "False"]
