# SPDX-License-Identifier: BSD-3-Clause
"""A profiled launch that does not end after every rank wrote its profile
(the MPI library stuck in MPI_Finalize) is stopped; others are left alone.
Fake launches (no MPI): a Python process writing rank files."""

import json
import subprocess
import sys

from mpiscope.profile import watch

LAUNCH = """
import json, pathlib, sys, time
raw, world, written, then = pathlib.Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
for r in range(written):
    (raw / f"rank-{r}.json").write_text(json.dumps({"world_size": world}))
time.sleep({"hang": 600, "linger": 2, "exit": 0}[then])
"""


def launch(tmp_path, world, written, then):
    return subprocess.Popen([sys.executable, "-c", LAUNCH, str(tmp_path), str(world), str(written), then])


def test_a_launch_stuck_after_every_rank_wrote_is_stopped(tmp_path):
    proc = launch(tmp_path, 2, 2, "hang")
    rc, stopped = watch.wait(proc, tmp_path, grace_s=1.0, poll_s=0.2)
    assert stopped and rc != 0 and proc.poll() is not None


def test_a_launch_that_ends_is_not_stopped(tmp_path):
    rc, stopped = watch.wait(launch(tmp_path, 2, 2, "exit"), tmp_path, grace_s=1.0, poll_s=0.2)
    assert (rc, stopped) == (0, False)


def test_a_launch_still_missing_a_rank_is_waited_for(tmp_path):
    # 2 of 3 ranks wrote, and the launch ends 2 s later on its own: never stopped
    rc, stopped = watch.wait(launch(tmp_path, 3, 2, "linger"), tmp_path, grace_s=0.5, poll_s=0.2)
    assert (rc, stopped) == (0, False)
    assert not watch.ranks_done(tmp_path)
    (tmp_path / "rank-2.json").write_text(json.dumps({"world_size": 3}))
    assert watch.ranks_done(tmp_path)
