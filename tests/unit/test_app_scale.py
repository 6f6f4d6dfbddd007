# SPDX-License-Identifier: BSD-3-Clause
"""The what-if at scale without the simulator (app/trace_pattern.py,
sim/replicate.py, app/scale.py) on a synthetic traced profile of 4 ranks
(app_traced.py): the traced pattern, partners' offsets, the rank counts a
replication accepts, and the default and tuned selections' picks."""

import pytest

from mpiscope.app.scale import Selector
from mpiscope.app.trace_pattern import traced_pattern
from mpiscope.app.tune_cells import read_tune
from mpiscope.common.errors import UsageError
from mpiscope.sim.replicate import offset
from app_traced import P, replicated, write_tune


def test_offsets_agree_at_both_ends():
    for p in (2, 3, 4, 5, 8):
        for r in range(p):
            for q in range(p):
                if q != r:
                    d = offset(r, q, p)
                    assert -p / 2 <= d <= p / 2 and (r + d) % p == q
                    assert offset(q, r, p) == -d   # the partner's view points back


def test_the_traced_pattern(traced_app):
    t = traced_pattern(traced_app)
    assert t.pattern.p == P and sorted(map(tuple, t.pattern.comms)) == [(0, 1), (0, 1, 2, 3), (2, 3)]
    kinds = [k for k, _, _ in t.pattern.nodes[0]]
    assert kinds == ["calc", "recv", "send", "calc", "coll", "calc", "coll", "calc", "coll"]
    # computations: the gaps after the last completion before each post
    assert t.pattern.compute_s == pytest.approx([0 + (1e-3 - 3e-5) + 9e-4 + 9e-4] * P)
    assert t.comm_s == pytest.approx([3.1e-3 - 2.77e-3] * P)
    calls = {c.name: c for k, c, _ in t.pattern.nodes[3] if k == "coll"}
    assert calls["MPI_Bcast"].root == 1 and t.pattern.comms[calls["MPI_Bcast"].comm] == (2, 3)
    assert calls["MPI_Barrier"].bench is None and calls["MPI_Allreduce"].bench == "allreduce"
    assert calls["MPI_Allreduce"].size == 64


def test_rank_counts_must_be_multiples(traced_app, tmp_path):
    with pytest.raises(UsageError, match="multiples of 4"):
        replicated(traced_app, tmp_path, 6, lambda *a: None)


def test_default_and_tuned_picks(app_tune, tmp_path):
    s = Selector(read_tune(app_tune))
    small = s.pick("allreduce", 8, 64)          # 8 ranks: the rules of 4; 64 B: the default's reading at 8 B
    assert (small.default, small.tuned, small.ours_default, small.ours_tuned) == \
        ("recursive_doubling", "recursive_doubling", "recursive_doubling", "recursive_doubling")
    large = s.pick("allreduce", 8, 4096)        # rule ring from 1024 B; the default read nearest: 64 KiB
    assert (large.default, large.tuned, large.ours_default, large.ours_tuned) == \
        ("rabenseifner", "ring", "rabenseifner", "ring")
    pipe = s.pick("bcast", 2, 128)
    assert (pipe.default, pipe.tuned, pipe.ours_default) == ("pipeline", "binomial", None)
    assert "pipeline has no algorithm of ours" in pipe.note
    assert s.pick("bcast", 8, 128).ours_tuned == "binomial"   # 8 ranks: the rules of 4 keep the default
    assert s.pick("alltoall", 8, 64).note.startswith("not tuned")
    unread = Selector(read_tune(write_tune(tmp_path / "t2", {"allreduce": {4: [(0, "ring")]}}, [])))
    x = unread.pick("allreduce", 4, 64)
    assert (x.tuned, x.ours_default, x.ours_tuned) == ("ring", None, None) and "not read" in x.note
