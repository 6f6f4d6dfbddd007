# SPDX-License-Identifier: BSD-3-Clause
"""The launcher found beside an MPI's compiler wrapper (engine/mpi.py's
find_launcher), on file trees laid out as Debian's alternatives and as
MPICH-derived installations are: the wrapper's own suffix wins."""

from mpiscope.engine.mpi import find_launcher


def _touch(path, target=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    if target:
        path.symlink_to(target)
    else:
        path.write_text("#!/bin/sh\n")
        path.chmod(0o755)


def test_launcher_is_found_beside_the_wrapper_with_its_suffix(tmp_path):
    # Debian's layout: mpicc -> /etc/alternatives/mpi -> mpicc.openmpi -> opal_wrapper,
    # while mpirun (the alternatives link) may belong to another MPI.
    usr, alt = tmp_path / "usr" / "bin", tmp_path / "etc" / "alternatives"
    _touch(usr / "opal_wrapper")
    _touch(usr / "mpicc.openmpi", "opal_wrapper")
    _touch(alt / "mpi", usr / "mpicc.openmpi")
    _touch(usr / "mpicc", alt / "mpi")
    _touch(usr / "mpirun.openmpi")
    _touch(usr / "mpiexec.mpich")
    _touch(usr / "mpirun")
    assert find_launcher(str(usr / "mpicc"), "openmpi") == str(usr / "mpirun.openmpi")
    assert find_launcher(str(usr / "mpicc.openmpi"), "openmpi") == str(usr / "mpirun.openmpi")
    # An MPICH-derived installation: mpiexec first.
    own = tmp_path / "opt" / "bin"
    _touch(own / "mpicc")
    _touch(own / "mpirun")
    assert find_launcher(str(own / "mpicc"), "mpich") == str(own / "mpirun")
    _touch(own / "mpiexec")
    assert find_launcher(str(own / "mpicc"), "mpich") == str(own / "mpiexec")
    assert find_launcher(str(tmp_path / "none" / "mpicc"), "mpich") is None
