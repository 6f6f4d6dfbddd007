# SPDX-License-Identifier: BSD-3-Clause
"""The version is read from the distribution's dist-info directly, as
importlib.metadata would find it, without importing importlib.metadata
(which `mpiscope run` would otherwise import before its launch)."""

import sys
from importlib.metadata import version as installed

from mpiscope.common import version as v


def _dist(root, name, text):
    d = root / name
    d.mkdir()
    (d / "METADATA").write_text(text)


def test_the_same_version_as_importlib_metadata():
    v.version.cache_clear()
    assert v.version() == installed("mpiscope")


def test_the_first_path_entry_with_the_distribution_counts(tmp_path, monkeypatch):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    _dist(first, "MPIScope-2.0.dist-info", "Metadata-Version: 2.4\nName: mpiscope\nVersion: 2.0\n\nVersion: 9\n")
    _dist(second, "mpiscope-3.0.dist-info", "Name: mpiscope\nVersion: 3.0\n")
    (tmp_path / "none").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), str(tmp_path / "none"), str(first), str(second)])
    assert v._dist_info_version() == "2.0"


def test_where_only_importlib_metadata_can_say_it_is_asked(tmp_path, monkeypatch):
    two = tmp_path / "two"
    two.mkdir()
    _dist(two, "mpiscope-1.0.dist-info", "Version: 1.0\n")
    _dist(two, "mpiscope-1.1.dist-info", "Version: 1.1\n")
    egg = tmp_path / "egg"
    egg.mkdir()
    _dist(egg, "mpiscope.egg-info", "Version: 1.0\n")
    archive = tmp_path / "lib.zip"
    archive.write_bytes(b"PK")
    for entry in (two, egg, archive):
        monkeypatch.setattr(sys, "path", [str(entry)])
        assert v._dist_info_version() is None
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing")])
    assert v._dist_info_version() is None
