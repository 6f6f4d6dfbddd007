# SPDX-License-Identifier: BSD-3-Clause
"""The cyclic garbage collector is off while a run is stored, and as it was after."""

import gc

import pytest

from mpiscope.measure.runner import _collector_paused


@pytest.fixture
def collector_as_it_was():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_paused_while_storing_and_on_again_after(collector_as_it_was):
    gc.enable()
    with _collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_on_again_when_storing_fails(collector_as_it_was):
    gc.enable()
    with pytest.raises(OSError), _collector_paused():
        raise OSError("disk full")
    assert gc.isenabled()


def test_left_off_when_it_was_off(collector_as_it_was):
    gc.disable()
    with _collector_paused():
        pass
    assert not gc.isenabled()
