"""The command lines that start the engine (no MPI needed)."""

from mpiscope.measure import launch


def cmd(**kw):
    base = dict(mpi="openmpi", launcher="mpirun", np=4, engine="/x/engine", engine_args=["--a", "1"])
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
    c = cmd(mpi="mpich", hostfile="hosts")
    assert c == ["mpiexec.hydra", "-n", "4", "-f", "hosts", "-bind-to", "core", "/x/engine", "--a", "1"]


def test_srun_open_mpi_uses_pmix_and_binds_cores():
    c = cmd(launcher="srun")
    assert c == ["srun", "--ntasks=4", "--mpi=pmix", "--kill-on-bad-exit=1", "--cpu-bind=cores",
                 "/x/engine", "--a", "1"]


def test_srun_mpich_uses_pmi2_and_hostfile_distribution():
    c = cmd(launcher="srun", mpi="mpich", hostfile="hosts")
    assert c[:4] == ["srun", "--ntasks=4", "--mpi=pmi2", "--kill-on-bad-exit=1"]
    assert "--distribution=arbitrary" in c
    env = launch.srun_env({}, "hosts")
    assert env["SLURM_HOSTFILE"] == "hosts"


def test_launcher_program_can_be_replaced():
    assert cmd(mpirun="/opt/bin/mpirun")[0] == "/opt/bin/mpirun"


def test_root_may_run_open_mpi():
    env = launch.launch_env("openmpi", base={})
    assert env["OMPI_ALLOW_RUN_AS_ROOT"] == "1" and env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] == "1"
