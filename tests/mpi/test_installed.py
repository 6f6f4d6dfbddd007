# SPDX-License-Identifier: BSD-3-Clause
"""An installed mpiscope (`pip install .`, not a checkout) builds and runs its
engine: the C sources ship inside the package (setup.py copies engine/,
clock/, cluster/, sim/, transport/ and pmpi/ to mpiscope/_csrc/) and builds go
to the user's cache directory.

The package is laid out as the wheel holds it by setup.py's build_py, the
step pip install runs. It keeps the sources' times, so the engine built in
the cache below is made once and reused while the sources stay the same.
"""

import json
import os
import subprocess
import sys

from mpiscope.engine.build import REPO

C_SOURCES = ("engine", "clock", "cluster", "sim", "transport", "pmpi")

CACHE = REPO / "build" / "installed-cache"  # stands for ~/.cache ($XDG_CACHE_HOME)


def _files(root):
    return {os.path.relpath(os.path.join(d, f), root) for d, _, names in os.walk(root) for f in names}


def test_installed_package_carries_the_c_sources_and_runs(tmp_path):
    lib = tmp_path / "site-packages"
    p = subprocess.run([sys.executable, "setup.py", "-q", "build_py", "--build-lib", str(lib)], cwd=REPO,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    for name in C_SOURCES:
        assert _files(lib / "mpiscope" / "_csrc" / name) == _files(REPO / name)

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "PYTHONPATH": str(lib), "XDG_CACHE_HOME": str(CACHE)}
    env.pop("MPISCOPE_MPICC", None)

    def mpiscope(*args):
        p = subprocess.run([sys.executable, "-m", "mpiscope.cli", *args], cwd=elsewhere, env=env,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout), p.stderr

    found, said = mpiscope("build", "--mpi", "openmpi", "--json")
    assert ("mpiscope: building the engine for Open MPI" in said) == (not found["was_built"])
    assert found["engine"] == str(CACHE / "mpiscope" / "engines" / found["key"] / "mpiscope-engine")
    summary, _ = mpiscope("run", "-n", "2", "--bench", "pingpong", "--sizes", "8", "--sync", "barrier",
                       "--json")
    assert summary["context"]["status"] == "completed" and summary["rows"][0]["n"] > 0
    context = json.loads((elsewhere / summary["run_dir"] / "context.json").read_text())
    assert context["mpi_identity"]["engine"] == found["engine"]
    assert context["git_sha"] is None  # not run from a checkout
