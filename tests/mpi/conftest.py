# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures shared by the tests of mpi/ (real MPI ranks on this machine)."""

import pytest

from known_traffic import profile_ok
from mpiscope.profile import summary


@pytest.fixture(scope="session")
def traced(tmp_path_factory):
    """A traced profile of the known-traffic program on Open MPI, made once
    for the trace and OTF2 tests."""
    out = tmp_path_factory.mktemp("traced")
    run_dir, _ = profile_ok(out, "openmpi", "--trace")
    return out, run_dir, summary.load(run_dir)


@pytest.fixture(scope="session")
def untraced(tmp_path_factory):
    """An untraced profile of the known-traffic program on Open MPI, made once
    for the tests in which what needs a trace refuses it."""
    out = tmp_path_factory.mktemp("untraced")
    run_dir, _ = profile_ok(out, "openmpi")
    return out, run_dir
