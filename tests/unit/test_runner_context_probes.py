# SPDX-License-Identifier: BSD-3-Clause
"""A run's context reads the checkout's commit (git) and describes the
machine (ldd) side by side, each waiting for its own process, before the
launch; what either returns or raises reaches the caller as before."""

import threading

import pytest

from mpiscope.measure import runner


def test_the_commit_and_the_machine_are_read_side_by_side(monkeypatch):
    both = threading.Barrier(2, timeout=10)  # passed only while both wait at once

    def sha():
        both.wait()
        return "abc123"

    def describe(engine):
        both.wait()
        return {"engine": engine}

    monkeypatch.setattr(runner, "git_sha", sha)
    monkeypatch.setattr(runner.machine, "describe", describe)
    assert runner._checkout_and_machine("ENGINE") == ("abc123", {"engine": "ENGINE"})


def test_what_reading_the_commit_raises_reaches_the_caller(monkeypatch):
    def sha():
        raise RuntimeError("no git")

    monkeypatch.setattr(runner, "git_sha", sha)
    monkeypatch.setattr(runner.machine, "describe", lambda engine: {})
    with pytest.raises(RuntimeError, match="no git"):
        runner._checkout_and_machine("ENGINE")
