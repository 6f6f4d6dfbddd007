# SPDX-License-Identifier: BSD-3-Clause
"""The sdist and the wheel `python -m build` makes, installed and used as a
user outside the clone would.

`python -m build` writes the sdist from the checkout and builds the wheel from
that sdist, so the wheel checked here is the one the sdist rebuilds. It goes
into a fresh virtual environment outside the checkout (its dependencies from
uv's cache, which the set-up filled, so nothing is downloaded), and runs from a
directory outside it with a cache directory of its own: it compiles its engine
from the C sources it carries (mpiscope/_csrc/, put there by setup.py) into
$XDG_CACHE_HOME/mpiscope/, measures, and writes a report.
"""

import json
import os
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from mpiscope.engine.build import REPO

NATIVE = Path("native")
C_SOURCES = ("engine", "clock", "cluster", "sim", "transport", "pmpi")
TEMPLATES = Path("src", "mpiscope", "report", "templates")
SCHEMAS = Path("docs", "schemas")
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
UV = Path(sys.executable).with_name("uv")  # the set-up's uv, beside its Python


def _files(root: Path) -> set[str]:
    """Every file under `root`, as a path relative to it."""
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


def _checked(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    assert p.returncode == 0, f"{cmd[:3]} exited {p.returncode}\nstdout:\n{p.stdout}\nstderr:\n{p.stderr}"
    return p


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """(sdist, wheel) built once for this module, offline: the build backend
    comes from uv's cache."""
    out = tmp_path_factory.mktemp("dist")
    _checked([sys.executable, "-m", "build", "--installer", "uv", "--outdir", str(out), str(REPO)],
             env={**os.environ, "UV_OFFLINE": "1"})
    return out / f"mpiscope-{VERSION}.tar.gz", out / f"mpiscope-{VERSION}-py3-none-any.whl"


def test_sdist_carries_the_sources_licence_schemas_and_templates(dist):
    sdist, _ = dist
    top = f"mpiscope-{VERSION}/"
    with tarfile.open(sdist) as tar:
        names = {m.name.removeprefix(top) for m in tar.getmembers() if m.isfile()}
    expected = {"LICENSE", "pyproject.toml", "setup.py", "MANIFEST.in"}
    expected |= {str(NATIVE / d / f) for d in C_SOURCES for f in _files(REPO / NATIVE / d)}
    expected |= {str(SCHEMAS / f) for f in _files(REPO / SCHEMAS) if f.endswith(".json")}
    expected |= {str(TEMPLATES / f) for f in _files(REPO / TEMPLATES)}
    assert expected - names == set()


def test_wheel_carries_what_the_package_reads(dist):
    _, wheel = dist
    with zipfile.ZipFile(wheel) as whl:
        names = set(whl.namelist())

    def under(prefix):
        return {n.removeprefix(prefix) for n in names if n.startswith(prefix)}

    for d in C_SOURCES:
        assert under(f"mpiscope/_csrc/{d}/") == _files(REPO / NATIVE / d), d
    assert under("mpiscope/schemas/") == {f for f in _files(REPO / SCHEMAS) if f.endswith(".json")}
    assert under("mpiscope/report/templates/") == _files(REPO / TEMPLATES)
    assert f"mpiscope-{VERSION}.dist-info/licenses/LICENSE" in names


def test_wheel_installs_builds_its_engine_measures_and_reports(dist, tmp_path):
    _, wheel = dist
    venv, home, cache = tmp_path / "venv", tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    _checked([str(UV), "venv", "--quiet", "--offline", "--python", sys.executable, str(venv)])
    _checked([str(UV), "pip", "install", "--quiet", "--offline", "--python", str(venv / "bin" / "python"),
              str(wheel)])

    hidden = ("PYTHONPATH", "VIRTUAL_ENV", "CFLAGS", "MPISCOPE_MPICC", "MPISCOPE_OUT", "MPISCOPE_CONFIG",
              "MPISCOPE_PROGRESS")
    path = [str(venv / "bin")] + [d for d in os.environ["PATH"].split(os.pathsep)
                                  if not d.startswith(str(REPO))]
    env = {**{k: v for k, v in os.environ.items() if k not in hidden},
           "PATH": os.pathsep.join(path), "XDG_CACHE_HOME": str(cache),
           "XDG_CONFIG_HOME": str(home / ".config")}

    def run(*args):
        return _checked([str(venv / "bin" / args[0]), *args[1:]], cwd=home, env=env)

    where = run("python", "-c", "import mpiscope; print(mpiscope.__file__); print(mpiscope.__version__)")
    package_file, version = where.stdout.split()
    package = Path(package_file).parent
    assert package.is_relative_to(venv) and version == VERSION  # the wheel's, not the checkout's

    built = run("mpiscope", "build", "--mpi", "openmpi", "--json")
    found = json.loads(built.stdout)
    assert "mpiscope: building the engine for Open MPI" in built.stderr and not found["was_built"]
    engine = cache / "mpiscope" / "engines" / found["key"] / "mpiscope-engine"
    assert found["engine"] == str(engine)
    # Built with -g, the engine names the directory it was compiled in.
    binary = engine.read_bytes()
    assert str(package / "_csrc" / "engine").encode() in binary and str(REPO).encode() not in binary

    summary = json.loads(run("mpiscope", "run", "-n", "2", "--bench", "pingpong", "--sizes", "8",
                             "--json").stdout)
    assert summary["context"]["status"] == "completed" and summary["rows"][0]["n"] > 0
    context = json.loads((home / summary["run_dir"] / "context.json").read_text())
    assert context["mpi_identity"]["engine"] == str(engine)
    assert context["git_sha"] is None  # not run from a checkout

    run("mpiscope", "report")
    assert summary["run_id"] in (home / "report.html").read_text()
