# SPDX-License-Identifier: BSD-3-Clause
"""mpiscope's version has one source, pyproject.toml: the package, the
`--version` line, the engine builds' key and the bench documents read it as
`mpiscope.__version__`, from the installed distribution's metadata."""

import tomllib

import mpiscope
from mpiscope.engine.build import REPO


def test_version_is_pyprojects():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert "version" not in project.get("dynamic", [])
    assert mpiscope.__version__ == project["version"]
    assert "__version__" in dir(mpiscope)
