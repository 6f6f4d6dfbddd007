# SPDX-License-Identifier: BSD-3-Clause
"""The command lines that start the engine (no MPI needed)."""

import pytest

from mpiscope.measure import launch


def cmd(**kw):
    base = dict(launcher_family="openmpi", launcher="mpirun", np=4, engine="/x/engine", engine_args=["--a", "1"])
    base.update(kw)
    return launch.command(**base)


def test_open_mpi_binds_ranks_to_cores():
    assert cmd() == ["mpirun.openmpi", "-n", "4", "--bind-to", "core", "/x/engine", "--a", "1"]


def test_open_mpi_oversubscribed_yields_instead_of_binding():
    c = cmd(oversubscribe=True)
    assert c[:3] == ["mpirun.openmpi", "-n", "4"]
    assert "--oversubscribe" in c and c[c.index("--bind-to") + 1] == "none"
    assert c[c.index("mpi_yield_when_idle") - 1] == "--mca" and c[c.index("mpi_yield_when_idle") + 1] == "1"


def test_mpich_uses_hydra_with_hostfile():
    c = cmd(launcher_family="mpich", hostfile="hosts")
    assert c == ["mpiexec.hydra", "-n", "4", "-f", "hosts", "-bind-to", "core", "/x/engine", "--a", "1"]


def test_srun_open_mpi_uses_pmix_and_binds_cores():
    c = cmd(launcher="srun")
    assert c == ["srun", "--ntasks=4", "--mpi=pmix", "--kill-on-bad-exit=1", "--cpu-bind=cores",
                 "/x/engine", "--a", "1"]


def test_srun_mpich_uses_pmi2_and_hostfile_distribution():
    c = cmd(launcher="srun", launcher_family="mpich", hostfile="hosts")
    assert c[:4] == ["srun", "--ntasks=4", "--mpi=pmi2", "--kill-on-bad-exit=1"]
    assert "--distribution=arbitrary" in c
    env = launch.srun_env({}, "hosts")
    assert env["SLURM_HOSTFILE"] == "hosts"


def test_launcher_program_can_be_replaced():
    assert cmd(mpirun="/opt/bin/mpirun")[0] == "/opt/bin/mpirun"


def test_root_may_run_open_mpi():
    env = launch.launch_env("openmpi", base={})
    assert env["OMPI_ALLOW_RUN_AS_ROOT"] == "1" and env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] == "1"


def test_launcher_args_come_last_before_the_engine():
    c = cmd(launcher_args=["--mca", "btl", "self,tcp", "-x", "A B"])
    assert c[-8:] == ["--mca", "btl", "self,tcp", "-x", "A B", "/x/engine", "--a", "1"]


def test_users_binding_replaces_ours():
    assert cmd(launcher_args=["--bind-to", "socket"]).count("--bind-to") == 1
    assert cmd(launcher_family="mpich", launcher_args=["-bind-to", "numa"]).count("-bind-to") == 1
    srun = cmd(launcher="srun", launcher_args=["--cpu-bind=sockets"])
    assert [w for w in srun if w.startswith("--cpu-bind")] == ["--cpu-bind=sockets"]


def test_users_srun_mpi_plugin_replaces_ours():
    c = cmd(launcher="srun", launcher_args=["--mpi=pmi2"])
    assert [w for w in c if w.startswith("--mpi")] == ["--mpi=pmi2"]


@pytest.mark.parametrize("mpi, launcher, words", [
    ("openmpi", "srun", ["--nodes=2", "--ntasks-per-node=3"]),
    ("mpich", "srun", ["--nodes=2", "--ntasks-per-node=3"]),
    ("openmpi", "mpirun", ["--map-by", "ppr:3:node"]),
    ("mpich", "mpirun", ["-ppn", "3"]),
])
def test_nodes_and_ppn_in_each_launchers_options(mpi, launcher, words):
    c = cmd(launcher_family=mpi, launcher=launcher, np=6, nodes=2, ppn=3)
    at = c.index(words[0])
    assert c[at:at + len(words)] == words


def test_srun_with_a_hostfile_places_by_it_alone():
    c = cmd(launcher="srun", hostfile="/run/hostfile", nodes=2, ppn=1)
    assert "--distribution=arbitrary" in c
    assert not any(w.startswith(("--nodes", "--ntasks-per-node")) for w in c)


@pytest.mark.parametrize("mpi, launcher, binding", [
    ("openmpi", "mpirun", "--bind-to"), ("mpich", "mpirun", "-bind-to"), ("openmpi", "srun", "--cpu-bind"),
])
def test_oversubscribing_hostfile_leaves_binding_alone(mpi, launcher, binding):
    c = cmd(launcher_family=mpi, launcher=launcher, hostfile="hosts", oversubscribe=True)
    assert not any(w.startswith(binding) for w in c)
    if mpi == "openmpi" and launcher == "mpirun":
        # Open MPI refuses more ranks than slots without it.
        assert "--oversubscribe" in c


def test_gives_reads_the_forms_of_an_option():
    assert launch.gives(["-N2"], ("-N",)) and launch.gives(["--cpu-bind=none"], ("--cpu-bind",))
    assert not launch.gives(["--cpu-binding"], ("--cpu-bind",)) and not launch.gives(["-Nx"], ("-N",))
