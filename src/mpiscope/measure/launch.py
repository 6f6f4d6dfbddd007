"""Command lines for starting the engine: mpirun (Open MPI), mpiexec.hydra
(MPICH) or srun (Slurm), and running one launch with live progress.

The launcher program and the MPI library come in as parameters; the library
and the launcher decide the syntax (`syntax()`): Open MPI's mpirun, MPICH's
hydra, or Slurm's srun.
"""

import collections
import ctypes
import os
import signal
import subprocess
import threading
import time

LAUNCHERS = ("mpirun", "srun")
DEFAULT_MPIRUN = {"openmpi": "mpirun.openmpi", "mpich": "mpiexec.hydra"}
# Slurm's PMI plugin for each library's wire-up (`srun --mpi=list` shows what Slurm has).
SRUN_MPI_PLUGIN = {"openmpi": "pmix", "mpich": "pmi2"}

# Options by which --launcher-args take binding or placement over from mpiscope.
BINDING_OPTIONS = {
    "openmpi": ("--bind-to", "-bind-to", "--rankfile", "-rf", "--cpu-set", "--cpu-list"),
    "hydra": ("-bind-to", "--bind-to", "-binding"),
    "slurm": ("--cpu-bind", "--cpu_bind"),
}
MAPPING_OPTIONS = {
    "openmpi": ("--map-by", "-map-by", "--npernode", "-npernode", "-N", "--ppr", "-ppr",
                "--rankfile", "-rf", "--host", "-host", "-H"),
    "hydra": ("-ppn", "--ppn", "-perhost", "-rr", "-hosts", "-host", "--host"),
    "slurm": ("--nodes", "-N", "--ntasks-per-node", "--distribution", "-m", "--nodelist", "-w"),
}


def local_cpus():
    return len(os.sched_getaffinity(0))


def syntax(mpi, launcher):
    """Whose options and hostfile syntax: 'openmpi', 'hydra' or 'slurm'."""
    if launcher == "srun":
        return "slurm"
    return "openmpi" if mpi == "openmpi" else "hydra"


def gives(args, options):
    """Whether `args` contain one of `options` (as `-x`, `--opt=v` or `-N2`)."""
    for a in args:
        for o in options:
            if a == o or a.startswith(o + "=") or (len(o) == 2 and a.startswith(o) and a[2:].isdigit()):
                return True
    return False


def launch_env(mpi, base=None):
    env = dict(os.environ if base is None else base)
    # Open MPI's mpirun refuses to run as root without both of these (set them
    # whatever the library: --mpirun may name Open MPI's launcher for MPICH).
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    return env


def command(*, mpi, launcher, np, engine, engine_args, hostfile=None, oversubscribe=False,
            mpirun=None, nodes=None, ppn=None, launcher_args=()):
    """The full argv that starts `np` engine ranks.

    `hostfile` is already in the launcher's syntax; `nodes` and `ppn` become the
    launcher's own options; `launcher_args` go last before the engine, and when
    they bind or place ranks themselves mpiscope adds no option of that kind.
    Oversubscribed (more ranks than cores somewhere): without a hostfile ranks
    are left unbound and yield; with one, binding is left to it and the user.
    """
    kind = syntax(mpi, launcher)
    user = list(launcher_args)
    binds = not gives(user, BINDING_OPTIONS[kind])
    if kind == "slurm":
        cmd = [mpirun or "srun", f"--ntasks={np}"]
        if not gives(user, ("--mpi",)):
            cmd.append(f"--mpi={SRUN_MPI_PLUGIN[mpi]}")
        cmd.append("--kill-on-bad-exit=1")
        if hostfile:
            # srun places tasks on the listed hosts in order with SLURM_HOSTFILE.
            cmd.append("--distribution=arbitrary")
        else:
            cmd += [f"--nodes={nodes}"] if nodes else []
            cmd += [f"--ntasks-per-node={ppn}"] if ppn else []
        if binds and not (oversubscribe and hostfile):
            cmd.append("--cpu-bind=none" if oversubscribe else "--cpu-bind=cores")
    elif kind == "openmpi":
        cmd = [mpirun or DEFAULT_MPIRUN[mpi], "-n", str(np)]
        if hostfile:
            cmd += ["--hostfile", str(hostfile)]
        if ppn:
            cmd += ["--map-by", f"ppr:{ppn}:node"]
        if oversubscribe:
            cmd.append("--oversubscribe")
            if binds and not hostfile:
                cmd += ["--bind-to", "none"]
            if "mpi_yield_when_idle" not in user:
                # More ranks than cores: without yielding, TCP latency becomes milliseconds.
                cmd += ["--mca", "mpi_yield_when_idle", "1"]
        elif binds:
            cmd += ["--bind-to", "core"]
    else:
        cmd = [mpirun or DEFAULT_MPIRUN[mpi], "-n", str(np)]
        if hostfile:
            cmd += ["-f", str(hostfile)]
        if ppn:
            cmd += ["-ppn", str(ppn)]
        if binds and not (oversubscribe and hostfile):
            cmd += ["-bind-to", "none" if oversubscribe else "core"]
    return cmd + user + [str(engine), *engine_args]


def srun_env(env, hostfile):
    if hostfile:
        env = dict(env, SLURM_HOSTFILE=str(hostfile))
    return env


STOP_WAIT_S = 10.0  # a launcher's time to stop its ranks and collect them after SIGTERM
STDERR_KEPT = 256 * 1024  # of a launcher's stderr, kept in memory (its beginning and end)


class _Sink:
    """Lines to a file as long as the file system takes them, and the text kept
    in memory too: on a full disk the launcher's own explanation (often the
    engine's "No space left on device") must not be lost with its file."""

    def __init__(self, path):
        self.head, self.tail, self.size, self.tail_size = [], collections.deque(), 0, 0
        self.lost = None
        try:
            self.file = open(path, "w")
        except OSError as exc:
            self.file, self.lost = None, exc

    def write(self, line, keep=True):
        if self.file is not None:
            try:
                self.file.write(line)
            except OSError as exc:
                self.file, self.lost = None, exc
        if not keep:
            return
        self.size += len(line)
        if self.size <= STDERR_KEPT // 2:
            self.head.append(line)
            return
        self.tail.append(line)
        self.tail_size += len(line)
        while len(self.tail) > 1 and self.tail_size > STDERR_KEPT // 2:
            self.tail_size -= len(self.tail.popleft())

    def text(self):
        gap = [] if self.size <= STDERR_KEPT else ["[...]\n"]
        return "".join(self.head + gap + list(self.tail))

    def close(self):
        if self.file is not None:
            try:
                self.file.close()
            except OSError as exc:
                self.lost = exc


PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
REAP_WAIT_S = 2.0


def _prctl():
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def adopt_orphans():
    """Makes mpiscope the subreaper of its launches (Linux): a rank its launcher
    left behind (a launcher that exits without collecting a killed rank) is
    re-parented here, not to init, and collected by _collect()."""
    prctl = _prctl()
    if prctl is not None:
        prctl(PR_SET_CHILD_SUBREAPER, 1)


def _collect(proc, before):
    """After the launcher ended: whatever is left of its process group is killed,
    and so is every process re-parented to mpiscope during the launch (a rank in
    a group of its own, which Open MPI gives them); all are collected, so no
    zombie stays. Children mpiscope had before the launch (`before`) are not
    touched."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    deadline = time.monotonic() + REAP_WAIT_S
    while True:
        left = [pid for pid in _children() if pid not in before and pid != proc.pid]
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, os.WNOHANG)
            except (ProcessLookupError, ChildProcessError):
                pass
        if not left or time.monotonic() > deadline:
            return
        time.sleep(0.02)  # a process just killed, still ending


def _children():
    """This process's children (from /proc; those re-parented to it included)."""
    me, found = os.getpid(), []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == me:
                    found.append(int(entry))
        except (OSError, IndexError, ValueError):
            continue
    return found


def _die_with_parent():
    """A function for the launcher to call before it starts: SIGTERM when mpiscope
    dies, even by SIGKILL (Linux prctl), so that no launch outlives its run. None
    elsewhere: stop() still ends the launch when mpiscope is interrupted."""
    prctl = _prctl()
    return None if prctl is None else (lambda: prctl(PR_SET_PDEATHSIG, signal.SIGTERM))


def stop(proc):
    """Stops a launcher started in its own session: SIGTERM first, so that it
    stops its ranks and collects them (mpirun and mpiexec forward it), then
    SIGKILL; _collect() ends the rest of its process group."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.wait()


def execute(cmd, env, log_path, on_progress, on_timing=None):
    """Runs one launch; engine lines starting with '@progress ' go to
    `on_progress(json_text)`, '@timing ' to `on_timing(json_text)`, everything
    else to `log_path`. Returns (exit code, everything the launcher wrote on
    stderr, kept in memory whether or not its file, `log_path` with the suffix
    .stderr, could be written). Interrupted, it stops the launcher and its
    ranks (stop()) before the exception goes on."""
    log, err = _Sink(log_path), _Sink(log_path.with_suffix(".stderr"))
    before = set(_children())
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace", stdin=subprocess.DEVNULL,
                            start_new_session=True, preexec_fn=_die_with_parent())
    reader = threading.Thread(target=lambda: [err.write(line) for line in proc.stderr], daemon=True)
    reader.start()
    try:
        for line in proc.stdout:
            if line.startswith("@progress "):
                on_progress(line[len("@progress "):])
            elif line.startswith("@timing ") and on_timing:
                on_timing(line[len("@timing "):])
            else:
                log.write(line, keep=False)
        rc = proc.wait()
    except BaseException:
        stop(proc)
        raise
    finally:
        _collect(proc, before)
        reader.join(STOP_WAIT_S)
        log.close()
        err.close()
    return rc, err.text()
