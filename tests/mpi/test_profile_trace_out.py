# SPDX-License-Identifier: BSD-3-Clause
"""A traced profile of native/pmpi/tests/known_traffic.c leaves mpiscope: as a GOAL
schedule the simulator runs (mpiscope sim schedule --from-trace), with
every counted point-to-point message once as a send and once as a receive
between the same ranks."""

import re
from collections import Counter

from mpiscope.profile import summary
from runcli import mpiscope
from known_traffic import NP


def _goal_messages(text):
    """Counter of (src, dst, bytes) over the sends, and over the receives, of a GOAL schedule."""
    sends, recvs, rank = Counter(), Counter(), None
    for line in text.splitlines():
        if m := re.match(r"rank (\d+) \{", line):
            rank = int(m[1])
        elif m := re.match(r"l\d+: send (\d+)b to (\d+)", line):
            sends[(rank, int(m[2]), int(m[1]))] += 1
        elif m := re.match(r"l\d+: recv (\d+)b from (\d+)", line):
            recvs[(int(m[2]), rank, int(m[1]))] += 1
    return sends, recvs


def test_profile_trace_to_goal_schedule_runs(traced, tmp_path):
    out, run_dir, prof = traced
    goal = tmp_path / "app.goal"
    p = mpiscope("sim", "schedule", "--out", out, "--from-trace", run_dir.name, "-o", goal)
    assert p.returncode == 0, p.stderr
    sends, recvs = _goal_messages(goal.read_text())
    counted = summary.messages(prof, "send")
    assert sum(sends.values()) == sum(recvs.values()) == counted["count"].sum() > 0
    assert sends == recvs  # every send has its receive, same ranks and bytes
    sent = prof.peers[prof.peers["direction"] == "sent"]
    per_pair = Counter()
    for (s, d, _), n in sends.items():
        per_pair[(s, d)] += n
    assert per_pair == Counter({(int(r), int(q)): int(m) for r, q, m in zip(sent["rank"], sent["peer"], sent["msgs"])})
    p = mpiscope("sim", "run", goal, "--alpha", "2us", "--beta", "1GB/s")
    assert p.returncode == 0, p.stderr
    assert f"{NP} ranks" in p.stdout and f"{sum(sends.values())} messages" in p.stdout


def test_schedule_of_a_profile_without_trace_is_refused(untraced, tmp_path):
    out, run_dir = untraced
    p = mpiscope("sim", "schedule", "--out", out, "--from-trace", run_dir.name, "-o", tmp_path / "x.goal")
    assert p.returncode == 2 and "--trace" in p.stderr
    assert not (tmp_path / "x.goal").exists()
