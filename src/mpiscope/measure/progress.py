# SPDX-License-Identifier: BSD-3-Clause
"""Progress of a run, one step per finished benchmark x size: a rich bar on a
terminal; elsewhere (a batch job's log, a pipe) one plain line per step with
the time left, flushed at once so the log shows it while the job runs.

MPISCOPE_PROGRESS=bar, plain or none chooses instead (1 means bar).
"""

from __future__ import annotations

import datetime
import os
import sys
import time


def progress(total, stream=None):
    """The progress display for `total` steps (a context manager)."""
    stream = stream or sys.stderr
    mode = os.environ.get("MPISCOPE_PROGRESS", "")
    mode = {"1": "bar", "0": "none"}.get(mode, mode)
    if mode not in ("bar", "plain", "none"):
        mode = "bar" if stream.isatty() else "plain"
    if mode == "bar":
        return BarProgress(total)
    return PlainProgress(total, stream if mode == "plain" else None)


class BarProgress:
    def __init__(self, total):
        # rich only for a terminal: a batch job's log is written without it.
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), transient=False
        )
        self._task = self._bar.add_task("measuring", total=total)

    def __enter__(self):
        self._bar.__enter__()
        return self

    def __exit__(self, *exc):
        return self._bar.__exit__(*exc)

    def add(self, steps):
        self._bar.update(self._task, total=self._bar.tasks[0].total + steps)

    def step(self, description):
        self._bar.update(self._task, advance=1, description=description)


class PlainProgress:
    """`[done/total] description, elapsed, time left and when it ends` a line."""

    def __init__(self, total, stream, clock=time.monotonic, now=datetime.datetime.now):
        self.total, self.done, self.stream = total, 0, stream
        self._clock, self._now = clock, now
        self._start = clock()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def add(self, steps):
        self.total += steps

    def step(self, description):
        self.done += 1
        if self.stream is None:
            return
        elapsed = self._clock() - self._start
        left = elapsed / self.done * max(self.total - self.done, 0)
        eta = (self._now() + datetime.timedelta(seconds=left)).strftime("%H:%M:%S")
        self.stream.write(
            f"[{self.done}/{self.total}] {description}, elapsed {_hms(elapsed)}, left ~{_hms(left)} (ETA {eta})\n"
        )
        self.stream.flush()


def _hms(seconds):
    return str(datetime.timedelta(seconds=round(seconds)))
