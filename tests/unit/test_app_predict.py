# SPDX-License-Identifier: BSD-3-Clause
"""The application's predicted speedup (app/speedup_prediction.py) against values
computed by hand, from a synthetic profile written in the profiler's raw
format and ingested, and a tune.json as the tuner writes it."""

import json
import math

import pytest

from mpiscope.app.speedup_prediction import agree, explain, predict, spread_sd
from mpiscope.app.profile_cells import profile_times
from mpiscope.app.tune_cells import read_tune
from mpiscope.common.errors import UsageError
from profilegen import write_profile

# Per rank (2 ranks, 10 s each: 20 rank-seconds): calls, seconds; summed over ranks below.
CELLS = [("MPI_Allreduce", 2, "node", 4, 50, 400, 2.0),     # 8-15 B -> verified 8 B: 2.0x [1.6, 2.5]
         ("MPI_Allreduce", 2, "node", 11, 5, 6000, 1.0),    # 1-2 KiB -> 1024 B: rule keeps the default
         ("MPI_Bcast", 2, "node", 17, 2, 200000, 1.0),      # 64-128 KiB -> 65536 B: 1.25x [1.0, 1.5625]
         ("MPI_Alltoall", 2, "node", 5, 3, 60, 0.5),        # not tuned
         ("MPI_Allreduce", 1, "self", 4, 4, 32, 0.25),      # communicator size 1: not tuned
         ("MPI_Iallreduce", 2, "node", 4, 7, 56, 0.25)]     # nonblocking


def _cell(coll, size, rule, s=None, lo=None, hi=None, verdict="same"):
    return {"collective": coll, "size": size, "p": 2, "rule": rule, "library_size": size, "speedup": s,
            "speedup_low": lo, "speedup_high": hi, "verdict": verdict}


def _tune(path, cells, rules=None):
    path.mkdir()
    doc = {"library": "openmpi", "version": "4.1.4", "p": 2, "ps": [2],
           "rules": rules or {"allreduce": {"2": [{"start": 0, "algorithm": "recursive_doubling"},
                                                  {"start": 512, "algorithm": "default"}]},
                              "bcast": {"2": [{"start": 0, "algorithm": "binomial"}]}},
           "default_runs": [{"collective": "allreduce", "p": 2, "size": 8, "algorithm": "recursive_doubling",
                             "as_forced": True}],
           "verification": {"cells": cells}}
    (path / "tune.json").write_text(json.dumps(doc))
    return read_tune(path)


@pytest.fixture
def inputs(tmp_path):
    prof = profile_times(write_profile(tmp_path / "prof", 2, 10.0, {0: CELLS, 1: CELLS}))
    tune = _tune(tmp_path / "tune", [
        _cell("allreduce", 8, "recursive_doubling", 2.0, 1.6, 2.5, "tuned faster"),
        _cell("allreduce", 1024, "default", 0.97, 0.9, 1.05),
        _cell("allreduce", 65536, "default", 1.0, 0.95, 1.05),
        _cell("bcast", 8, "binomial", 1.1, 1.0, 1.2),
        _cell("bcast", 65536, "binomial", 1.25, 1.0, 1.5625, "tuned faster")])
    return prof, tune


def test_profile_cells_are_read_from_the_ingested_tables(inputs):
    prof, _ = inputs
    assert prof.np == 2 and prof.wall_s == pytest.approx(20.0) and prof.wall_per_rank_s == pytest.approx(10.0)
    by = {(c.collective, c.blocking, c.comm_size, c.lo): c for c in prof.cells}
    c = by[("allreduce", True, 2, 8)]
    assert (c.hi, c.calls, c.time_s) == (15, 100, pytest.approx(4.0))
    assert by[("allreduce", False, 2, 8)].time_s == pytest.approx(0.5)
    assert by[("bcast", True, 2, 65536)].hi == 131071
    assert prof.mpi_s == pytest.approx(10.0)


def test_prediction_against_hand_computed_values(inputs):
    prof, tune = inputs
    pr = predict(prof, tune, seed=3)
    # T = 20; verified: allreduce 8 B (4 s at 2.0x) and bcast 64 KiB (2 s at 1.25x); the rest unchanged
    assert pr.speedup == pytest.approx(20 / (14 + 4 / 2 + 2 / 1.25))
    assert pr.bound_low == pytest.approx(20 / (14 + 4 / 1.6 + 2 / 1.0))
    assert pr.bound_high == pytest.approx(20 / (14 + 4 / 2.5 + 2 / 1.5625))
    assert pr.collective_share == pytest.approx(6 / 20)
    assert pr.bound_low < pr.low < pr.speedup < pr.high < pr.bound_high
    status = {(c.collective, c.comm_size, c.lo, c.blocking): c for c in pr.cells}
    assert status[("allreduce", 2, 8, True)].tuned_size == 8
    assert status[("allreduce", 2, 8, True)].saved_s == pytest.approx(2.0)
    assert status[("allreduce", 2, 1024, True)].status == "unchanged: the rule keeps the library's default"
    assert status[("allreduce", 2, 1024, True)].tuned_size == 1024
    assert status[("bcast", 2, 65536, True)].rule == "binomial"
    assert status[("alltoall", 2, 16, True)].status == "unchanged: collective not tuned"
    assert status[("allreduce", 1, 8, True)].status == "unchanged: communicator size 1 not tuned"
    assert status[("allreduce", 2, 8, False)].status.startswith("unchanged: nonblocking")
    assert sum(c.share for c in pr.cells) == pytest.approx(10 / 20)
    # seeded: the same interval again
    again = predict(prof, tune, seed=3)
    assert (again.low, again.high) == (pr.low, pr.high)
    assert pr.to_dict()["cells"][0]["status"]


def test_launch_time_outside_the_profile_is_unchanged(inputs):
    prof, tune = inputs
    pr = predict(prof, tune, app_time_s=15.0)
    assert pr.app_time_s == 15.0
    assert pr.speedup == pytest.approx(30 / (24 + 2 + 1.6))
    assert predict(prof, tune, app_time_s=5.0).speedup == pytest.approx(20 / 17.6)  # shorter: the profile's


def test_one_cell_interval_is_its_interval_carried_through(tmp_path):
    """With one verified cell the app speedup rises with the cell's, so its
    95% interval is the cell's interval ends carried through: the bounds."""
    prof = profile_times(write_profile(tmp_path / "prof", 2, 10.0, {0: CELLS[:1], 1: CELLS[:1]}))
    tune = _tune(tmp_path / "tune", [_cell("allreduce", 8, "recursive_doubling", 2.0, 1.6, 2.5, "tuned faster")])
    pr = predict(prof, tune, draws=40000)
    assert pr.low == pytest.approx(pr.bound_low, rel=0.01)
    assert pr.high == pytest.approx(pr.bound_high, rel=0.01)
    assert math.isclose(pr.speedup, 20 / 18)


def test_agreement_and_what_carries_the_difference(inputs):
    prof, tune = inputs
    pr = predict(prof, tune)
    assert agree((pr.low * 0.9, pr.low * 1.01), pr)
    assert not agree((pr.high * 1.05, pr.high * 1.2), pr)
    ex = explain(1.4, pr, top=2)
    assert ex.direction == "measured above prediction"
    assert ex.gap_share == pytest.approx((1 - 1 / 1.4) - (1 - 1 / pr.speedup))
    (first, share), (second, share2) = ex.carrying
    assert (first.collective, first.lo, share) == ("allreduce", 8, pytest.approx(2.0 / 2.4))
    assert (second.collective, share2) == ("bcast", pytest.approx(0.4 / 2.4))
    assert first.share == pytest.approx(4 / 20)
    assert [c.collective for c in ex.unchanged] == ["allreduce", "alltoall"]  # 2 s at 1 KiB, then 1 s
    assert explain(pr.speedup, pr).direction == "agree"
    doc = ex.to_dict()
    assert doc["carrying"][0]["share_of_gain"] == pytest.approx(2.0 / 2.4)
    assert doc["carrying"][0]["share"] == pytest.approx(4 / 20) and doc["unchanged"][0]["lo"] == 1024


def test_bad_inputs_are_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="not a completed profile run"):
        profile_times(tmp_path)
    with pytest.raises(UsageError, match="does not exist"):
        read_tune(tmp_path / "nothing")
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "tune.json").write_text("{}")
    with pytest.raises(UsageError, match="not a tune's tune.json"):
        read_tune(tmp_path / "t")


def test_the_interval_carries_the_applications_launch_spread(inputs):
    """A measured speedup varies with the application's launches as well as
    with the cells: the interval with that spread is wider on both sides,
    the point is the same, and the bounds widen by the spread's 95% factor."""
    prof, tune = inputs
    alone = predict(prof, tune, draws=40000)
    sd = spread_sd(1.0, 1.2)
    assert sd == pytest.approx(math.log(1.2) / (2 * 1.959963984540054))
    spread = predict(prof, tune, launch_spread_sd=sd, draws=40000)
    assert spread.speedup == alone.speedup and spread.launch_spread_sd == sd
    assert spread.low < alone.low and spread.high > alone.high
    assert spread.bound_high / alone.bound_high == pytest.approx(math.exp(1.959963984540054 * sd))
    assert [spread_sd(None, 1.2), spread_sd(1.2, 1.0), spread_sd(0.0, 1.0)] == [0.0, 0.0, 0.0]


def test_the_interval_holds_the_launch_spread_and_widens_with_it(inputs):
    """log(measured / predicted) varies as the cells' and the launches'
    spreads together, sqrt(sd_cells^2 + sd_launches^2): the predicted
    interval is at least as wide as the measured one it is judged with,
    and wider the wider the launches spread."""
    prof, tune = inputs
    cells = predict(prof, tune, draws=40000)
    sd_cells = math.log(cells.high / cells.low) / (2 * 1.959963984540054)
    widths = []
    for measured in ((0.99, 1.01), (0.95, 1.05), (0.8, 1.25)):
        sd = spread_sd(*measured)
        pr = predict(prof, tune, launch_spread_sd=sd, draws=40000)
        assert pr.high / pr.low >= measured[1] / measured[0]
        assert pr.low < pr.speedup < pr.high
        combined = math.log(pr.high / pr.low) / (2 * 1.959963984540054)
        assert combined == pytest.approx(math.hypot(sd_cells, sd), rel=0.05)
        widths.append(pr.high / pr.low)
    assert widths[0] < widths[1] < widths[2]


def test_with_no_verified_cell_the_interval_is_the_launch_spread_alone(tmp_path):
    prof = profile_times(write_profile(tmp_path / "prof", 2, 10.0, {0: CELLS[:1], 1: CELLS[:1]}))
    tune = _tune(tmp_path / "tune", [])
    sd = spread_sd(0.9, 1.1)
    pr = predict(prof, tune, launch_spread_sd=sd, draws=40000)
    assert pr.speedup == 1.0
    assert pr.low == pytest.approx(math.exp(-1.959963984540054 * sd), rel=0.01)
    assert pr.high == pytest.approx(math.exp(1.959963984540054 * sd), rel=0.01)
