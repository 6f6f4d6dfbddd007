# SPDX-License-Identifier: BSD-3-Clause
"""System side of the emulated cluster: commands, namespaces, processes.

Everything here acts only on namespaces named by topology (prefix `mps-`)
and on processes running inside them or started by us.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from mpiscope.cluster.topology import ours

NETNS_DIR = Path("/run/netns")


class ClusterError(Exception):
    """A system command needed by the cluster failed (not the user's input)."""


def run(argv, *, check=True, input=None, timeout=30):
    """Runs a command; on failure raises ClusterError naming the command and its message."""
    argv = [str(a) for a in argv]
    try:
        p = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            input=input,
            timeout=timeout,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise ClusterError(f"'{argv[0]}' is not installed") from None
    except subprocess.TimeoutExpired:
        raise ClusterError(f"'{' '.join(argv)}' did not finish within {timeout} s") from None
    if check and p.returncode != 0:
        msg = (p.stderr or p.stdout).strip().splitlines()
        raise ClusterError(f"'{' '.join(argv)}' failed: {msg[-1] if msg else f'exit {p.returncode}'}")
    return p


def in_ns(netns, argv):
    """argv to run a command inside a network namespace."""
    return ["ip", "netns", "exec", netns, *argv]


def netns_path(name) -> Path:
    return NETNS_DIR / name


def list_netns(cluster=None):
    """Our namespaces (of `cluster`, when given) that exist now."""
    try:
        names = sorted(os.listdir(NETNS_DIR))
    except FileNotFoundError:
        return []
    return [n for n in names if ours(n, cluster)]


def add_netns(name):
    run(["ip", "netns", "add", name])


def delete_netns(name):
    if netns_path(name).exists():
        run(["ip", "netns", "delete", name], check=False)


def _ns_inode(path):
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def pids_in_netns(name):
    """Processes whose network namespace is `name` (as `ip netns pids`)."""
    ino = _ns_inode(netns_path(name))
    if ino is None:
        return []
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}/ns/net").st_ino == ino and not is_zombie(int(entry)):
                pids.append(int(entry))
        except OSError:
            continue
    return pids


def is_zombie(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return True


def start_time(pid):
    """Start time of a process in clock ticks since boot (identifies it across pid reuse)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def alive(pid, started=None):
    """True while the process `pid` (with this start time, when given) runs."""
    if pid is None or is_zombie(pid):
        return False
    st = start_time(pid)
    return st is not None and (started is None or st == started)


def stop_processes(pids, grace=2.0):
    """SIGTERM, then SIGKILL after `grace` seconds, for these processes only."""
    pids = [p for p in pids if alive(p)]
    for p in pids:
        try:
            os.kill(p, signal.SIGTERM)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.02)
    for p in pids:
        if alive(p):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline and any(alive(p) for p in pids):
        time.sleep(0.02)


def make_uts(path: Path, hostname: str):
    """A persistent UTS namespace at `path` whose host name is `hostname`."""
    path.touch()
    run(["unshare", f"--uts={path}", "hostname", hostname])


def remove_uts(path: Path):
    if path.exists():
        run(["umount", str(path)], check=False)
        try:
            path.unlink()
        except OSError:
            pass


def set_sysctls(netns, values: dict):
    """Writes /proc/sys entries inside a namespace; entries the kernel lacks are skipped."""
    script = "; ".join(f"[ -e /proc/sys/{k} ] && echo {v} > /proc/sys/{k}" for k, v in values.items())
    run(in_ns(netns, ["sh", "-c", script + "; true"]))
