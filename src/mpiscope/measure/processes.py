# SPDX-License-Identifier: BSD-3-Clause
"""A launch's processes: its output kept even when the disk is full, the
launcher stopped so that it collects its ranks, and whatever it leaves behind
(a rank re-parented to mpiscope, a zombie) ended and collected. Linux prctl
where it helps; elsewhere the same without it."""

import collections
import ctypes
import os
import signal
import subprocess
import time

STOP_WAIT_S = 10.0  # a launcher's time to stop its ranks and collect them after SIGTERM
STDERR_KEPT = 256 * 1024  # of a launcher's stderr, kept in memory (its beginning and end)


class Sink:
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
    re-parented here, not to init, and collected by collect()."""
    prctl = _prctl()
    if prctl is not None:
        prctl(PR_SET_CHILD_SUBREAPER, 1)


def collect(proc, before):
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
        left = [pid for pid in children() if pid not in before and pid != proc.pid]
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, os.WNOHANG)
            except (ProcessLookupError, ChildProcessError):
                pass
        if not left or time.monotonic() > deadline:
            return
        time.sleep(0.02)  # a process just killed, still ending


def children():
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


def die_with_parent():
    """A function for the launcher to call before it starts: SIGTERM when mpiscope
    dies, even by SIGKILL (Linux prctl), so that no launch outlives its run. None
    elsewhere: stop() still ends the launch when mpiscope is interrupted."""
    prctl = _prctl()
    return None if prctl is None else (lambda: prctl(PR_SET_PDEATHSIG, signal.SIGTERM))


def stop(proc):
    """Stops a launcher started in its own session: SIGTERM first, so that it
    stops its ranks and collects them (mpirun and mpiexec forward it), then
    SIGKILL; collect() ends the rest of its process group."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
    proc.wait()
