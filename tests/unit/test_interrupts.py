# SPDX-License-Identifier: BSD-3-Clause
"""SIGINT while a run measures: the handler's exception stops the run, and one
that Python drops (raised inside a __del__) still stops it before the next launch."""

import signal

import pytest

from mpiscope.measure.interrupts import Interrupted, signals_stop_the_run, stop_if_interrupted


class _RaisesOnCollection:
    def __del__(self):
        signal.raise_signal(signal.SIGINT)  # the handler runs here, inside __del__


def test_the_handler_raises_interrupted_once():
    with signals_stop_the_run() as signals:
        with pytest.raises(Interrupted, match="SIGINT"):
            signal.raise_signal(signal.SIGINT)
        assert signals.received == ["SIGINT"]


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_an_interrupt_lost_in_a_destructor_stops_the_next_launch():
    with signals_stop_the_run() as signals:
        _RaisesOnCollection()  # collected at once: Python prints the exception and drops it
        assert signals.received == ["SIGINT"]
        with pytest.raises(Interrupted, match="SIGINT"):
            stop_if_interrupted()


def test_no_interrupt_no_stop_and_none_while_storing():
    stop_if_interrupted()  # no run under way
    with signals_stop_the_run() as signals:
        stop_if_interrupted()
        signals.storing = True
        signal.raise_signal(signal.SIGINT)  # noted, not raised: the store is not cut short
        assert signals.received == ["SIGINT"]
        stop_if_interrupted()
    assert signal.getsignal(signal.SIGINT) is not signals.handler
