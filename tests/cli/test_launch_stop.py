# SPDX-License-Identifier: BSD-3-Clause
"""A launch (measure/launch.py's execute, on plain shell commands standing
for launchers) that never returns is killed with its children at its
timeout; one that lingers after "@finalize" is stopped after the grace and
said so, its samples whole."""


def test_a_launch_that_never_returns_is_killed_with_its_children(tmp_path):
    """A forced algorithm may hang (MPICH's nb allgather did on an emulated
    cluster): the launch's whole session is killed at its timeout."""
    import time
    from mpiscope.measure import launch
    marker = tmp_path / "child.pid"
    cmd = ["sh", "-c", f"sleep 60 & echo $! > {marker}; wait"]
    began = time.monotonic()
    rc, err, hung = launch.execute(cmd, None, tmp_path / "l.log", lambda t: None, timeout=1.0)
    assert time.monotonic() - began < 20
    assert rc != 0 and "was killed" in err and not hung
    child = int(marker.read_text())
    time.sleep(0.2)
    import os
    try:
        os.kill(child, 0)
        alive = open(f"/proc/{child}/stat").read().split()[2] != "Z"
    except ProcessLookupError:
        alive = False
    assert not alive, "the launcher's child survived"
    rc, _, hung = launch.execute(["true"], None, tmp_path / "m.log", lambda t: None, timeout=10.0)
    assert rc == 0 and not hung


def test_a_launch_that_lingers_after_finalize_is_stopped_and_said_so(tmp_path, monkeypatch):
    """After "@finalize" the launch gets the grace, then is stopped; the
    caller learns that it was stopped there (its samples are whole), not
    that it failed. A launch that ends in time is not flagged."""
    from mpiscope.measure import launch
    monkeypatch.setenv("MPISCOPE_TEST_FINALIZE_GRACE_S", "0.5")
    rc, _, hung = launch.execute(["sh", "-c", "echo @finalize; sleep 60"], None,
                                 tmp_path / "l.log", lambda t: None)
    assert rc != 0 and hung
    rc, _, hung = launch.execute(["sh", "-c", "echo @finalize; sleep 0.1"], None,
                                 tmp_path / "m.log", lambda t: None)
    assert rc == 0 and not hung
