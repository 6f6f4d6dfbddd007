# SPDX-License-Identifier: BSD-3-Clause
"""engine/make.py: a build directory a failed make created and left empty
(a compiler wrapper that cannot compile, as Intel MPI's under a wrong
I_MPI_ROOT) is removed, lock and all; one that was there before, or holds
what was built, stays."""

from pathlib import Path

from mpiscope.engine.locations import source_dir
from mpiscope.engine.make import make


def _failing_wrapper(tmp_path) -> Path:
    wrapper = tmp_path / "mpicc"
    wrapper.write_text("#!/bin/sh\necho 'I_MPI_ROOT points nowhere' >&2\nexit 1\n")
    wrapper.chmod(0o755)
    return wrapper


def test_a_failed_build_leaves_no_directory(tmp_path):
    probes = tmp_path / "probes"
    out = probes / "0123456789abcdef"
    made = make(source_dir("engine"), out, f"MPICC={_failing_wrapper(tmp_path)}", "identity")
    assert made.returncode != 0 and "I_MPI_ROOT" in made.stderr + made.stdout
    assert not out.exists()
    assert list(probes.iterdir()) == []


def test_a_directory_that_was_there_stays(tmp_path):
    out = tmp_path / "probes" / "0123456789abcdef"
    out.mkdir(parents=True)
    (out / "mpi-identity").write_text("built before")
    made = make(source_dir("engine"), out, f"MPICC={_failing_wrapper(tmp_path)}", "cvars")
    assert made.returncode != 0
    assert (out / "mpi-identity").read_text() == "built before"
