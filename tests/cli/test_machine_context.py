# SPDX-License-Identifier: BSD-3-Clause
"""The `machine` block of a run's context (measure/machine.py): what
`mpiscope history` names when two runs differ. It asks `ldd`, a process,
so it is tested here rather than in unit/; no MPI."""

import os
import platform
import shutil

import pytest

from mpiscope.measure import machine


@pytest.fixture
def program():
    path = shutil.which("ls") or shutil.which("sh")
    assert path, "a dynamically linked program to read"
    return os.path.realpath(path)


def test_describe_names_the_kernel_the_engine_and_its_libraries(program):
    found = machine.describe(program)
    assert found["kernel"].startswith(platform.release())
    assert len(found["engine_sha256"]) == 16 and int(found["engine_sha256"], 16) >= 0
    libc = [path for name, path in found["libraries"].items() if name.startswith("libc.so")]
    assert libc and os.path.isfile(libc[0])
    assert found["mpiscope_version"]


def test_a_missing_engine_leaves_its_fields_out(tmp_path):
    found = machine.describe(tmp_path / "no-engine")
    assert "libraries" not in found and "engine_sha256" not in found
    assert found["kernel"] and None not in found.values()


def test_the_digest_changes_with_the_binary(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"engine one")
    b.write_bytes(b"engine two")
    assert machine.describe(a)["engine_sha256"] != machine.describe(b)["engine_sha256"]
