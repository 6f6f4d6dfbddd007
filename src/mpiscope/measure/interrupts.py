# SPDX-License-Identifier: BSD-3-Clause
"""SIGINT and SIGTERM during `mpiscope run`: the first stops the launch (the run
is then stored as failed), later ones are noted while the run is stored."""

import contextlib
import signal
import sys
import threading


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM while a run measures: stop the launch, store the run as failed."""


_under_way: list = []  # the Signals of the run measuring now (nested runs: the innermost last)


class Signals:
    """SIGINT and SIGTERM while a run measures raise Interrupted, once; after that,
    and while what was measured is stored, they are noted and ignored, so the
    store is not cut short."""

    def __init__(self):
        self.received, self.storing = [], False

    def handler(self, signum, frame):
        name = signal.Signals(signum).name
        self.received.append(name)
        if len(self.received) == 1 and not self.storing:
            raise Interrupted(name)
        sys.stderr.write(
            f"mpiscope: {name}: storing what was measured first (SIGKILL stops at once and leaves the run unfinished)\n"
        )


@contextlib.contextmanager
def signals_stop_the_run():
    signals = Signals()
    if threading.current_thread() is not threading.main_thread():
        yield signals
        return
    previous = {sig: signal.signal(sig, signals.handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    _under_way.append(signals)
    try:
        yield signals
    finally:
        _under_way.remove(signals)
        for sig, old in previous.items():
            signal.signal(sig, old)


def stop_if_interrupted():
    """Raises Interrupted before a launch starts when a signal came and the
    handler's exception was lost: Python drops an exception raised while a
    __del__ method or a weakref callback runs, and the handler may run there."""
    if _under_way and _under_way[-1].received and not _under_way[-1].storing:
        raise Interrupted(_under_way[-1].received[0])
