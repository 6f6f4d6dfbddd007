# SPDX-License-Identifier: BSD-3-Clause
"""A real Slurm cluster on this machine for tests: Debian's munged, slurmctld
and one slurmd per node name (Slurm's multiple-slurmd mode: `slurmd -N NAME`,
each node on its own port of 127.0.0.1), all under one temporary directory
with a generated slurm.conf. Clients find it through SLURM_CONF (`env`).

No cgroups (proctrack/linuxproc, task/none): containers seldom allow them.
Each node has its own TmpFS, so PMIx's per-step directories of two nodes
on one machine do not collide.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd", "sinfo", "salloc", "srun", "sbatch")


def _free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def slurm_conf(d: Path, nodes, cpus, ctld_port, node_ports, host):
    lines = [
        "ClusterName=mpiscope-test",
        f"SlurmctldHost={host}(127.0.0.1)",
        "SlurmUser=root", "SlurmdUser=root",
        f"SlurmctldPort={ctld_port}",
        "AuthType=auth/munge", "CredType=cred/munge",
        f"AuthInfo=socket={d / 'munge.sock'}",
        f"StateSaveLocation={d / 'state'}",
        f"SlurmdSpoolDir={d / 'spool' / '%n'}",
        f"TmpFS={d / 'tmp' / '%n'}",
        f"SlurmctldPidFile={d / 'slurmctld.pid'}",
        f"SlurmdPidFile={d / 'slurmd-%n.pid'}",
        f"SlurmctldLogFile={d / 'slurmctld.log'}",
        f"SlurmdLogFile={d / 'slurmd-%n.log'}",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
        "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
        # Several nodes share this machine's CPUs: take the configured counts as given.
        "SlurmdParameters=config_overrides",
        "MpiDefault=none", "SwitchType=switch/none", "ReturnToService=2",
        "JobCompType=jobcomp/none", "AccountingStorageType=accounting_storage/none",
        "JobAcctGatherType=jobacct_gather/none", "SchedulerType=sched/backfill",
        "InactiveLimit=0", "KillWait=5", "MinJobAge=30",
    ]
    for name, port in zip(nodes, node_ports):
        lines.append(f"NodeName={name} NodeHostname={host} NodeAddr=127.0.0.1 Port={port} "
                     f"CPUs={cpus} State=UNKNOWN")
    lines.append(f"PartitionName=debug Nodes={','.join(nodes)} Default=YES MaxTime=60 State=UP")
    return "\n".join(lines) + "\n"


class SlurmCluster:
    def __init__(self, nodes=("n1", "n2"), cpus=2):
        # munged wants its socket's directories searchable by all (pytest's are not).
        self.dir, self.nodes = Path(tempfile.mkdtemp(prefix="mpiscope-slurm-")), list(nodes)
        self.dir.chmod(0o755)
        self.conf = self.dir / "slurm.conf"
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self.procs = []
        self.cpus = cpus

    def start(self, timeout=60):
        missing = [p for p in DAEMONS if shutil.which(p) is None]
        if missing:
            raise RuntimeError(f"Slurm is not installed (missing {', '.join(missing)}); run "
                               f"'make setup' (scripts/setup-system.sh installs it)")
        d = self.dir
        for sub in ["state", *(f"spool/{n}" for n in self.nodes), *(f"tmp/{n}" for n in self.nodes)]:
            (d / sub).mkdir(parents=True, exist_ok=True)
        key = d / "munge.key"
        key.write_bytes(os.urandom(128))
        key.chmod(0o600)
        ports = _free_ports(1 + len(self.nodes))
        self.conf.write_text(slurm_conf(d, self.nodes, self.cpus, ports[0], ports[1:],
                                        socket.gethostname()))
        self._spawn(["munged", "--foreground", f"--key-file={key}", f"--socket={d / 'munge.sock'}",
                     f"--pid-file={d / 'munged.pid'}", f"--log-file={d / 'munged.log'}",
                     f"--seed-file={d / 'munged.seed'}"], "munged.out")
        self._wait(lambda: (d / "munge.sock").exists(), 20, "munged did not create its socket")
        self._spawn(["slurmctld", "-D", "-i", "-f", str(self.conf)], "slurmctld.out")
        for n in self.nodes:
            self._spawn(["slurmd", "-D", "-f", str(self.conf), "-N", n], f"slurmd-{n}.out")
        self._wait(lambda: self.idle_nodes() == len(self.nodes), timeout,
                   "the nodes did not become idle")

    def _spawn(self, argv, out):
        with open(self.dir / out, "w") as f:
            self.procs.append(subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT,
                                               stdin=subprocess.DEVNULL, env=self.env))

    def _wait(self, ready, timeout, what):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            dead = [p.args[0] for p in self.procs if p.poll() is not None]
            if dead:
                raise RuntimeError(f"{', '.join(dead)} stopped; logs in {self.dir}")
            if ready():
                return
            time.sleep(0.5)
        raise RuntimeError(f"{what} within {timeout} s; logs in {self.dir}")

    def run(self, argv, timeout=300, **kw):
        return subprocess.run(argv, capture_output=True, text=True, env=self.env, timeout=timeout, **kw)

    def submit_and_wait(self, script, log, cwd, timeout=300):
        """`sbatch` a script and waits for its end (polling faster than `sbatch
        --wait` does); returns the job's final state, e.g. COMPLETED."""
        p = self.run(["sbatch", "--parsable", f"--output={log}", str(script)], cwd=cwd)
        if p.returncode != 0:
            raise RuntimeError(f"sbatch failed: {p.stderr}")
        job = p.stdout.strip().split(";")[0]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            show = self.run(["scontrol", "show", "job", job], timeout=30).stdout
            state = re.search(r"JobState=(\S+)", show)
            if state and state.group(1) not in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING"):
                return state.group(1)
            time.sleep(0.5)
        raise RuntimeError(f"job {job} did not end within {timeout} s")

    def idle_nodes(self):
        p = self.run(["sinfo", "-h", "-N", "-o", "%N %t"], timeout=30)
        return sum(1 for line in p.stdout.splitlines() if line.split()[-1:] == ["idle"])

    def step_nodes(self, job_id):
        """Nodes whose slurmd launched a task of `job_id`'s steps (from their logs)."""
        out = []
        for n in self.nodes:
            log = self.dir / f"slurmd-{n}.log"
            if log.exists() and f"launch task StepId={job_id}." in log.read_text(errors="replace"):
                out.append(n)
        return out

    def stop(self):
        """Cancels what is left, ends the daemons (slurmds first, munged last) and
        removes the cluster's directory."""
        if any(p.poll() is None for p in self.procs):
            self.run(["scancel", "--user", "root"], timeout=30)
            self._wait_quiet()
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def _wait_quiet(self, timeout=30):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            p = self.run(["squeue", "-h"], timeout=30)
            if p.returncode != 0 or not p.stdout.strip():
                return
            time.sleep(0.5)


@contextlib.contextmanager
def running(**kw):
    """A SlurmCluster started for the `with` block and stopped after it, also
    when the block fails (a test module's fixture)."""
    cluster = SlurmCluster(**kw)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
