# SPDX-License-Identifier: BSD-3-Clause
"""Every file the package reads goes through common/inputs.py (regular files
only, size and nesting limits): the test walks the package's syntax trees
and fails on a direct open, read_text, read_bytes, json.load, tomllib.load or
Parquet/DuckDB read anywhere else. The modules below may read directly, each
for the reason given; none of them reads a path a user names or a run's file."""

import ast
from pathlib import Path

import mpiscope

PACKAGE = Path(mpiscope.__file__).parent

ALLOWED = {
    "common/inputs.py": "the one reader",
    "common/atomic.py": "reads back its own temporary file to copy it onto a device or FIFO",
    "cli/main.py": "opens os.devnull after a broken pipe",
    "report/render.py": "the package's own style sheet (importlib.resources)",
    "common/version.py": "the installed distribution's own METADATA, as importlib.metadata reads it",
    "engine/make.py": "the lock file of the package's private build directory",
    "engine/describe.py": "the engine's description cached in the private build directory",
    "mpilibs/intelmpi/__init__.py": "the probe's output in the private build directory",
    "mpilibs/mpich/cvars.py": "the MPI library file itself (a shared object the probe named)",
    "stats/rto.py": "a kernel setting under /proc/sys",
    "measure/machine.py": "the machine's description under /proc and /sys",
    "measure/processes.py": "process states under /proc, and the log files it creates",
    "measure/runner.py": "the launch logs this command created (is_file checked first)",
    "profile/runner.py": "the launch logs this command created (is_file checked first)",
    "app/launch.py": "the launch logs this command created (is_file checked first)",
    "profile/monitoring.py": "files Open MPI's monitoring wrote into this command's scratch directory",
    "profile/symbols.py": "18 bytes of the program's ELF header, after is_regular",
    "sim/replicate.py": "writes a schedule into a temporary directory of its caller",
    "store/catalog.py": "DuckDB opens the catalog after is_regular (else the directories are scanned)",
    "cluster/manager.py": "process command lines under /proc",
    "cluster/netns.py": "process states under /proc",
    "cluster/delayd.py": "the delay daemon's log and statistics in the cluster's root-owned directory",
    "cluster/launching.py": "the hostfile it wrote into the cluster's root-owned directory",
}

READS = {"read_text", "read_bytes"}                       # pathlib
MODULE_READS = {("json", "load"), ("tomllib", "load"), ("pq", "read_table"), ("pq", "read_schema"),
                ("pq", "ParquetFile"), ("pq", "read_metadata"), ("pd", "read_parquet"),
                ("duckdb", "connect")}


def _direct_reads(tree):
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "open":
            yield node.lineno, "open"
        elif isinstance(f, ast.Attribute):
            if f.attr in READS:
                yield node.lineno, f.attr
            elif f.attr == "open" and isinstance(f.value, ast.Name) and f.value.id in ("os", "io"):
                yield node.lineno, f"{f.value.id}.open"
            elif isinstance(f.value, ast.Name) and (f.value.id, f.attr) in MODULE_READS:
                yield node.lineno, f"{f.value.id}.{f.attr}"


def test_every_reader_goes_through_common_inputs():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel in ALLOWED:
            continue
        tree = ast.parse(path.read_text(), str(path))
        found += [f"src/mpiscope/{rel}:{line}: {what}" for line, what in _direct_reads(tree)]
    assert not found, ("direct reads outside common/inputs.py (use read_text/read_json/read_toml/"
                       "read_parquet there, or add the module to ALLOWED with its reason):\n"
                       + "\n".join(found))


def test_the_check_finds_a_direct_read():
    tree = ast.parse("import json\nx = json.load(open(p))\ny = Path(p).read_text()\n")
    assert sorted(what for _, what in _direct_reads(tree)) == ["json.load", "open", "read_text"]


def test_every_allowed_module_exists_and_still_reads():
    for rel in ALLOWED:
        path = PACKAGE / rel
        assert path.is_file(), f"{rel} is allowed to read directly but does not exist"
        assert list(_direct_reads(ast.parse(path.read_text()))), f"{rel} no longer reads: drop it"
