# SPDX-License-Identifier: BSD-3-Clause
"""Command lines for starting the engine: the library's own launcher
(mpilibs/: Open MPI's mpirun, Hydra's mpiexec) or srun (Slurm), and running
one launch with live progress.

The launcher program and the MPI library come in as parameters; they decide
whose options and hostfile apply (`launcher_of()`).
"""

import os
import signal
import subprocess
import threading

from mpiscope import mpilibs
from mpiscope.measure.interrupts import stop_if_interrupted
from mpiscope.measure.processes import STOP_WAIT_S, Sink, children, collect, die_with_parent, stop
from mpiscope.mpilibs.launcher import Launcher

LAUNCHERS = ("mpirun", "srun")
MAX_LAUNCHES = 10_000  # launches of one run: each starts the job anew, so more is a typing error
# After rank 0 said "@finalize" (every rank has stored its samples and only
# MPI_Finalize is left), the seconds the launch may still take before it is
# stopped: well under a second normally, a few beside a CPU hog; MPICH 4.0's
# ch4:ucx can spin there for ever (native/clock/quiet_exit.c; pmodels/mpich#6596).
FINALIZE_GRACE_S = 60.0


class Srun(Launcher):
    """Slurm's srun, with the library's PMI plugin (`srun --mpi=list` shows what Slurm has)."""

    name = "srun"
    hostfile_form = "ranks"
    binding_options = ("--cpu-bind", "--cpu_bind")
    mapping_options = ("--nodes", "-N", "--ntasks-per-node", "--distribution", "-m", "--nodelist", "-w")

    def command(self, *, program, library, np, hostfile, nodes, ppn, oversubscribe, binds, user):
        cmd = [program or "srun", f"--ntasks={np}"]
        if not gives(user, ("--mpi",)):
            cmd.append(f"--mpi={library.srun_plugin}")
        cmd.append("--kill-on-bad-exit=1")
        if hostfile:
            # srun places tasks on the listed hosts in order with SLURM_HOSTFILE.
            cmd.append("--distribution=arbitrary")
        else:
            cmd += [f"--nodes={nodes}"] if nodes else []
            cmd += [f"--ntasks-per-node={ppn}"] if ppn else []
        if binds and not (oversubscribe and hostfile):
            cmd.append("--cpu-bind=none" if oversubscribe else "--cpu-bind=cores")
        return cmd


def local_cpus():
    return len(os.sched_getaffinity(0))


def launcher_of(launcher_family, launcher) -> Launcher:
    """Whose options and hostfile form apply: srun's, or the library's own launcher's
    (`launcher_family`: the key of the library it is launched as)."""
    return Srun() if launcher == "srun" else mpilibs.get(launcher_family).launcher


def gives(args, options):
    """Whether `args` contain one of `options` (as `-x`, `--opt=v` or `-N2`)."""
    for a in args:
        for o in options:
            if a == o or a.startswith(o + "=") or (len(o) == 2 and a.startswith(o) and a[2:].isdigit()):
                return True
    return False


def launch_env(launcher_family, base=None):
    env = dict(os.environ if base is None else base)
    # What each library's launcher needs to run as root, whatever the library:
    # --mpirun may name another library's launcher.
    for lib in mpilibs.LIBRARIES:
        for k, v in lib.root_env.items():
            env.setdefault(k, v)
    return env


def command(
    *,
    launcher_family,
    launcher,
    np,
    engine,
    engine_args,
    hostfile=None,
    oversubscribe=False,
    mpirun=None,
    nodes=None,
    ppn=None,
    launcher_args=(),
):
    """The full argv that starts `np` engine ranks.

    `hostfile` is already in the launcher's syntax; `nodes` and `ppn` become the
    launcher's own options; `launcher_args` go last before the engine, and when
    they bind or place ranks themselves mpiscope adds no option of that kind.
    Oversubscribed (more ranks than cores somewhere): without a hostfile ranks
    are left unbound and yield; with one, binding is left to it and the user.
    """
    kind = launcher_of(launcher_family, launcher)
    user = list(launcher_args)
    cmd = kind.command(
        program=mpirun,
        library=mpilibs.get(launcher_family),
        np=np,
        hostfile=hostfile,
        nodes=nodes,
        ppn=ppn,
        oversubscribe=oversubscribe,
        binds=not gives(user, kind.binding_options),
        user=user,
    )
    return cmd + user + [str(engine), *engine_args]


def srun_env(env, hostfile):
    if hostfile:
        env = dict(env, SLURM_HOSTFILE=str(hostfile))
    return env


def finalize_grace() -> float:
    """FINALIZE_GRACE_S, or the test hook MPISCOPE_TEST_FINALIZE_GRACE_S."""
    return float(os.environ.get("MPISCOPE_TEST_FINALIZE_GRACE_S") or FINALIZE_GRACE_S)


def _kill_session(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def execute(cmd, env, log_path, on_progress, on_timing=None, timeout=None):
    """Runs one launch; engine lines starting with '@progress ' go to
    `on_progress(json_text)`, '@timing ' to `on_timing(json_text)`, everything
    else to `log_path`. Returns (exit code, everything the launcher wrote on
    stderr, kept in memory whether or not its file, `log_path` with the suffix
    .stderr, could be written). Interrupted, it stops the launcher and its
    ranks (stop()) before the exception goes on. With `timeout` (seconds) the
    launch's whole session is killed when it runs longer (a collective that
    never returns), which stderr then says. A launch that has not ended
    finalize_grace() seconds after the engine said "@finalize" is stopped
    too: the third value says so, and its samples are whole."""
    stop_if_interrupted()
    log, err = Sink(log_path), Sink(log_path.with_suffix(".stderr"))
    before = set(children())
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=die_with_parent(),
    )
    reader = threading.Thread(target=lambda: [err.write(line) for line in proc.stderr], daemon=True)
    reader.start()
    timers, hung = [], threading.Event()

    def start_timer(seconds, then):
        timers.append(threading.Timer(seconds, then))
        timers[-1].daemon = True
        timers[-1].start()

    def expire():
        err.write(f"\nmpiscope: the launch ran longer than {timeout:.0f} s and was killed\n")
        _kill_session(proc)

    def finalize_hung():
        if proc.poll() is None:
            hung.set()
            _kill_session(proc)

    if timeout is not None:
        start_timer(timeout, expire)
    try:
        for line in proc.stdout:
            if line.startswith("@progress "):
                on_progress(line[len("@progress ") :])
            elif line.startswith("@timing ") and on_timing:
                on_timing(line[len("@timing ") :])
            elif line.strip() == "@finalize":
                start_timer(finalize_grace(), finalize_hung)
            else:
                log.write(line, keep=False)
        rc = proc.wait()
    except BaseException:
        stop(proc)
        raise
    finally:
        for timer in timers:
            timer.cancel()
        collect(proc, before)
        reader.join(STOP_WAIT_S)
        log.close()
        err.close()
    return rc, err.text(), hung.is_set()
