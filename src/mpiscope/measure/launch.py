"""Command lines for starting the engine: mpirun (Open MPI), mpiexec.hydra
(MPICH) or srun (Slurm), and running one launch with live progress."""

import os
import subprocess

LAUNCHERS = ("mpirun", "srun")
MPIS = ("openmpi", "mpich")
DEFAULT_MPIRUN = {"openmpi": "mpirun.openmpi", "mpich": "mpiexec.hydra"}
# Slurm's PMI plugin for each library's wire-up.
SRUN_MPI_PLUGIN = {"openmpi": "pmix", "mpich": "pmi2"}


def local_cpus():
    return len(os.sched_getaffinity(0))


def launch_env(mpi, base=None):
    env = dict(os.environ if base is None else base)
    # Open MPI's mpirun refuses to run as root without both of these (set them
    # whatever the library: --mpirun may name Open MPI's launcher for MPICH).
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


def command(*, mpi, launcher, np, engine, engine_args, hostfile=None, oversubscribe=False,
            mpirun=None, extra=()):
    """The full argv that starts `np` engine ranks."""
    argv = [str(engine), *engine_args]
    if launcher == "srun":
        cmd = [mpirun or "srun", f"--ntasks={np}", f"--mpi={SRUN_MPI_PLUGIN[mpi]}",
               "--kill-on-bad-exit=1"]
        if hostfile:
            # srun places tasks on the listed hosts in order with SLURM_HOSTFILE.
            cmd.append("--distribution=arbitrary")
        cmd.append("--cpu-bind=none" if oversubscribe else "--cpu-bind=cores")
        return cmd + list(extra) + argv
    if mpi == "openmpi":
        cmd = [mpirun or DEFAULT_MPIRUN[mpi], "-n", str(np)]
        if hostfile:
            cmd += ["--hostfile", str(hostfile)]
        if oversubscribe:
            # More ranks than cores: without yielding, TCP latency becomes milliseconds.
            cmd += ["--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]
        else:
            cmd += ["--bind-to", "core"]
        return cmd + list(extra) + argv
    cmd = [mpirun or DEFAULT_MPIRUN[mpi], "-n", str(np)]
    if hostfile:
        cmd += ["-f", str(hostfile)]
    cmd += ["-bind-to", "none" if oversubscribe else "core"]
    return cmd + list(extra) + argv


def srun_env(env, hostfile):
    if hostfile:
        env = dict(env, SLURM_HOSTFILE=str(hostfile))
    return env


def execute(cmd, env, log_path, on_progress, on_timing=None):
    """Runs one launch; engine lines starting with '@progress ' go to
    `on_progress(json_text)`, '@timing ' to `on_timing(json_text)`, everything
    else to `log_path`. Returns (exit code, last lines of stderr)."""
    err_path = log_path.with_suffix(".stderr")
    with open(log_path, "w") as log, open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=err, text=True,
                                stdin=subprocess.DEVNULL)
        try:
            for line in proc.stdout:
                if line.startswith("@progress "):
                    on_progress(line[len("@progress "):])
                elif line.startswith("@timing ") and on_timing:
                    on_timing(line[len("@timing "):])
                else:
                    log.write(line)
            rc = proc.wait()
        except BaseException:
            proc.kill()
            proc.wait()
            raise
    return rc, err_path.read_text(errors="replace")
