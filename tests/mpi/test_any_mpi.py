# SPDX-License-Identifier: BSD-3-Clause
"""Any MPI, chosen by its compiler wrapper (docs/how-to/your-own-mpi.md).

Five implementations: Debian's Open MPI 4.1 and MPICH 4.0, and Open MPI 5.0,
MPICH 5.0 and Intel MPI 2021 from the package index, one virtual environment
each under build/mpi-envs/ (`make mpi-envs`, which `make test` runs; the
fixture runs it too). For each, `mpiscope build --mpicc` identifies the MPI
and builds the engine, and a 2-rank run of pingpong, allreduce and alltoall
with --check completes, launched by the launcher beside the wrapper, with the
library the engine itself reports being the one the identity names.
"""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from mpiscope.engine.build import REPO
from mpiscope.store import ingest
from runcli import mpiscope, run_ok, run_dirs

ENVS = REPO / "build" / "mpi-envs"
BENCHES = ("pingpong", "allreduce", "alltoall")
SIZES = (8, 65536)  # eager and, in every one of them, rendezvous
# --sync barrier: no sample is invalid for starting late, so each series has samples however busy the machine.

# name: (wrapper, implementation, version prefix, launcher, environment)
MPIS = {
    "debian-openmpi-4.1": ("/usr/bin/mpicc.openmpi", "open-mpi", "4.1.", "/usr/bin/mpirun.openmpi", {}),
    "debian-mpich-4.0": ("/usr/bin/mpicc.mpich", "mpich", "4.0.", "/usr/bin/mpiexec.mpich", {}),
    "openmpi-5.0": (ENVS / "openmpi5/bin/mpicc", "open-mpi", "5.0.", ENVS / "openmpi5/bin/mpirun", {}),
    "mpich-5.0": (ENVS / "mpich5/bin/mpicc", "mpich", "5.0.", ENVS / "mpich5/bin/mpiexec", {}),
    # Intel's wrappers compile against $I_MPI_ROOT (its vars.sh or conda activation sets it).
    "intel-mpi-2021": (ENVS / "intelmpi/bin/mpicc", "intel-mpi", "2021.", ENVS / "intelmpi/bin/mpiexec",
                       {"I_MPI_ROOT": str(ENVS / "intelmpi")}),
}


@pytest.fixture(scope="module")
def mpi_envs():
    """The three MPIs from the package index (installed once; a moment afterwards)."""
    p = subprocess.run(["make", "-s", "-C", str(REPO), "mpi-envs"], capture_output=True, text=True)
    assert p.returncode == 0, f"make mpi-envs failed:\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}"


@pytest.mark.parametrize("name", list(MPIS))
def test_engine_builds_and_checked_run_passes(name, mpi_envs, tmp_path):
    wrapper, implementation, version, launcher, env = MPIS[name]
    assert Path(wrapper).is_file(), f"{wrapper} is missing (make setup / make mpi-envs)"
    p = mpiscope("build", "--mpicc", wrapper, "--json", env=env)
    assert p.returncode == 0, p.stderr
    found = json.loads(p.stdout)
    assert found["implementation"] == implementation and found["version"].startswith(version)
    assert found["family"] == ("openmpi" if implementation == "open-mpi" else "mpich")
    assert found["launcher"] == str(launcher)
    assert found["key"].startswith(f"{implementation}-{found['version']}-")
    assert found["engine"] == str(REPO / "build" / "engines" / found["key"] / "mpiscope-engine")
    assert os.access(found["engine"], os.X_OK)

    run_dir, summary = run_ok("--mpicc", wrapper, "-n", "2", "--bench", ",".join(BENCHES),
                              "--sizes", ",".join(map(str, SIZES)), "--check", "--sync", "barrier", "--reps-min", "10",
                              "--time-budget", "0.3", out=tmp_path, env=env)
    assert summary["context"]["status"] == "completed"
    measured = {(r["bench"], r["size"]) for r in summary["rows"] if r["n"] > 0}
    assert measured == {(b, s) for b in BENCHES for s in SIZES}
    context = ingest.load_context(run_dir)  # with what ingest read from the raw files
    identity = context["mpi_identity"]
    assert {k: identity[k] for k in found if k in identity} == \
        {k: v for k, v in found.items() if k in identity}
    assert context["mpi"] == found["family"]
    assert context["launch_commands"][0][0] == str(launcher)
    # The library the engine ran with (its raw header) is the one identified.
    assert context["mpi_library"].splitlines()[0].strip() == identity["library"].splitlines()[0].strip()


def test_mpi_shorthand_and_environment_choose_the_same_builds(mpi_envs):
    by_mpi = json.loads(mpiscope("build", "--mpi", "openmpi", "--json").stdout)
    by_alternative = json.loads(mpiscope("build", "--mpicc", "/usr/bin/mpicc.openmpi", "--json").stdout)
    assert by_mpi["key"] == by_alternative["key"] and by_mpi["launcher"] == "/usr/bin/mpirun.openmpi"
    wrapper = str(MPIS["mpich-5.0"][0])
    by_env = json.loads(mpiscope("build", "--json", env={"MPISCOPE_MPICC": wrapper}).stdout)
    assert by_env["wrapper"] == wrapper and by_env["version"].startswith("5.0.")


def test_bad_wrapper_choices_are_usage_errors(tmp_path):
    p = mpiscope("run", "-n", "2", "--mpicc", tmp_path / "no-such-mpicc", "--bench", "pingpong", out=tmp_path)
    assert p.returncode == 2 and "no-such-mpicc" in p.stderr and "--mpicc" in p.stderr
    p = mpiscope("build", "--mpicc", "/bin/true")
    assert p.returncode == 2 and "not an MPI compiler wrapper" in p.stderr
    p = mpiscope("run", "-n", "2", "--mpi", "openmpi", "--mpicc", "/usr/bin/mpicc.openmpi", out=tmp_path)
    assert p.returncode == 2 and "give one of them" in p.stderr
    assert run_dirs(tmp_path) == []


def test_intel_wrapper_without_its_root_says_what_to_export(mpi_envs):
    p = mpiscope("build", "--mpicc", MPIS["intel-mpi-2021"][0], env={"I_MPI_ROOT": ""})
    assert p.returncode == 2
    assert f"export I_MPI_ROOT={ENVS / 'intelmpi'}" in p.stderr


def test_intel_wrapper_under_a_wrong_root_leaves_no_probe_directory(mpi_envs):
    probes = REPO / "build" / "probes"
    before = set(probes.iterdir()) if probes.is_dir() else set()
    p = mpiscope("build", "--mpicc", MPIS["intel-mpi-2021"][0], env={"I_MPI_ROOT": "/nonexistent"})
    assert p.returncode == 2 and "cannot compile a small MPI program" in p.stderr
    assert (set(probes.iterdir()) if probes.is_dir() else set()) <= before


def test_a_wrapper_without_a_launcher_beside_it_needs_mpirun(tmp_path):
    # A wrapper of our own around Debian's: same compile line, no launcher in its directory.
    wrapper = tmp_path / "bin" / "mpicc"
    wrapper.parent.mkdir()
    wrapper.write_text(f"#!/bin/sh\nexec {shutil.which('mpicc.openmpi')} \"$@\"\n")
    wrapper.chmod(0o755)
    p = mpiscope("run", "-n", "2", "--mpicc", wrapper, "--bench", "pingpong", "--sizes", "8",
                 out=tmp_path / "runs")
    assert p.returncode == 2 and "--mpirun" in p.stderr and str(wrapper) in p.stderr
    assert run_dirs(tmp_path / "runs") == []
