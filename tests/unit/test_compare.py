# SPDX-License-Identifier: BSD-3-Clause
"""Comparing two runs (stats/compare.py): a verdict needs both the test and
the noise band, bandwidths point the other way, stored runs across
libraries, and what is listed, skipped or refused when the runs differ."""

import numpy as np
import pytest

from analysis_runs import build_run
from mpiscope.stats.compare import compare, compare_samples, compare_series, verdict
from mpiscope.common.errors import UsageError
from mpiscope.stats.estimate import Estimate
from mpiscope.store.run import Run
from mpiscope.store.samples import Samples

A_ID, B_ID = "20240401-120000-aaaa", "20240402-120000-bbbb"


def _lognormal(seed, n=200, median=2e-6, sigma=0.05):
    return median * np.random.default_rng(seed).lognormal(0.0, sigma, n)


def _samples(values, rule="half_round_trip"):
    v = np.asarray(values, dtype=float)
    z = np.zeros(len(v), dtype=np.int32)
    return Samples(v, 0, z, z, z, z - 1, rule)


def _series(spec):
    """[(bench, algo, size, Samples)] from {(bench, size): values}; bw is a bandwidth."""
    return [(b, "mpi", s, _samples(v, "bandwidth" if b == "bw" else "half_round_trip"))
            for (b, s), v in spec.items()]


def _ratio(low, high, point=None):
    point = (low + high) / 2 if point is None else point
    return Estimate(point, 0.01, 0.95, low, high, "test")


# ---------------------------------------------------------------- the verdict rule

def test_verdict_needs_both_the_test_and_the_noise_band():
    assert verdict(_ratio(1.05, 1.15), 0.001, 0.02, 0.05) == "slower"
    assert verdict(_ratio(0.85, 0.95), 0.001, 0.02, 0.05) == "faster"
    # Significant but the CI reaches into the band 0.98..1.02: same.
    assert verdict(_ratio(1.01, 1.15), 0.001, 0.02, 0.05) == "same"
    # CI outside the band but not significant: same.
    assert verdict(_ratio(1.05, 1.15), 0.2, 0.02, 0.05) == "same"
    assert verdict(_ratio(1.05, 1.15), 0.05, 0.02, 0.05) == "same"   # p < alpha, strictly


def test_verdict_bandwidth_direction():
    # Ratio B/A of bandwidths above 1: B moves more bytes per second, it is faster.
    assert verdict(_ratio(1.05, 1.15), 0.001, 0.02, 0.05, higher_is_better=True) == "faster"
    assert verdict(_ratio(0.85, 0.95), 0.001, 0.02, 0.05, higher_is_better=True) == "slower"


# ---------------------------------------------------------------- two samples

def test_ten_percent_slowdown_is_slower():
    a = _lognormal(1)
    b = 1.10 * _lognormal(2)
    ratio, p, v, reps = compare_samples(a, b, np.random.default_rng(1))
    assert v == "slower" and p < 1e-6
    assert ratio.contains(1.10) and ratio.low > 1.02
    assert ratio.point == pytest.approx(np.median(b) / np.median(a))
    assert len(reps) == 2000


def test_half_percent_change_is_same_under_two_percent_noise():
    a = _lognormal(1, n=2000, sigma=0.01)
    b = 1.005 * _lognormal(2, n=2000, sigma=0.01)
    ratio, p, v, _ = compare_samples(a, b, np.random.default_rng(1), noise=0.02)
    assert p < 0.05              # the test sees the change ...
    assert ratio.high < 1.02     # ... which is inside the noise band
    assert v == "same"


def test_bandwidth_direction_in_samples():
    a = 8e9 * np.random.default_rng(1).lognormal(0, 0.03, 100)
    b = 1.10 * 8e9 * np.random.default_rng(2).lognormal(0, 0.03, 100)
    assert compare_samples(a, b, np.random.default_rng(1), higher_is_better=True)[2] == "faster"
    assert compare_samples(b, a, np.random.default_rng(1), higher_is_better=True)[2] == "slower"


def test_identical_samples_are_same():
    a = _lognormal(1)
    ratio, p, v, _ = compare_samples(a, a.copy(), np.random.default_rng(1))
    assert (ratio.point, v) == (1.0, "same") and p == pytest.approx(1.0)


# ---------------------------------------------------------------- series and runs

def test_geomean_of_time_ratios_with_bandwidth_inverted():
    a = {("pingpong", 8): [1e-6] * 9, ("bw", 1024): [1e9] * 9}
    # pingpong takes 1.21× longer; bw is unchanged: geomean √1.21 = 1.1.
    b = {("pingpong", 8): [1.21e-6] * 9, ("bw", 1024): [1e9] * 9}
    cmp = compare_series(_series(a), _series(b), Run.from_context({"run_id": "a"}), Run.from_context({"run_id": "b"}))
    assert cmp.geomean.point == pytest.approx(1.1)
    # bw 1.21× higher bandwidth is a time ratio 1/1.21: geomean 1.
    b = {("pingpong", 8): [1.21e-6] * 9, ("bw", 1024): [1.21e9] * 9}
    cmp = compare_series(_series(a), _series(b), Run.from_context({"run_id": "a"}), Run.from_context({"run_id": "b"}))
    assert cmp.geomean.point == pytest.approx(1.0)
    rows = {r.bench: r for r in cmp.rows}
    assert rows["bw"].ratio.point == pytest.approx(1.21)
    assert rows["bw"].time_ratio == pytest.approx(1 / 1.21)
    assert rows["bw"].verdict == "faster" and rows["pingpong"].verdict == "slower"
    # Constant samples: the bootstrap CI collapses onto the point.
    assert (cmp.geomean.low, cmp.geomean.high) == pytest.approx((1.0, 1.0))


def test_only_in_one_run_is_listed_and_not_compared():
    a = {("pingpong", 8): _lognormal(1), ("pingpong", 64): _lognormal(2),
         ("allreduce", 8): _lognormal(3)}
    b = {("pingpong", 8): _lognormal(4), ("bw", 8): _lognormal(5, median=3e7)}
    cmp = compare_series(_series(a), _series(b), Run.from_context({"run_id": "a"}), Run.from_context({"run_id": "b"}))
    assert [(r.bench, r.size) for r in cmp.rows] == [("pingpong", 8)]
    assert cmp.only_a == [("pingpong", "mpi", 64), ("allreduce", "mpi", 8)]
    assert cmp.only_b == [("bw", "mpi", 8)]
    doc = cmp.to_dict()
    assert doc["only_b"] == [{"bench": "bw", "algo": "mpi", "size": 8}]


def test_nothing_in_common_is_refused_with_what_each_run_has():
    a = {("pingpong", 8): _lognormal(1)}
    b = {("pingpong", 16): _lognormal(2), ("bw", 1024): _lognormal(3, median=5e8)}
    with pytest.raises(UsageError) as exc:
        compare_series(_series(a), _series(b), Run.from_context({"run_id": "ra"}), Run.from_context({"run_id": "rb"}))
    msg = str(exc.value)
    assert "no benchmark × size in common" in msg
    assert "A has pingpong 8 B" in msg and "B has pingpong 16 B; bw 1K B" in msg


def test_request_missing_from_one_run_names_the_run():
    a = {("pingpong", 8): _lognormal(1), ("bw", 8): _lognormal(2, median=3e7)}
    b = {("pingpong", 8): _lognormal(3), ("pingpong", 64): _lognormal(4)}
    sa, sb = _series(a), _series(b)
    ctx = (Run.from_context({"run_id": "ra"}), Run.from_context({"run_id": "rb"}))
    with pytest.raises(UsageError,
                       match=r"run B \(rb\) has no benchmark 'bw' \(it has: pingpong\)"):
        compare_series(sa, sb, *ctx, bench="bw")
    with pytest.raises(UsageError, match=r"run A \(ra\) has no pingpong at 64 B \(it has: "
                                         r"pingpong 8 B\)"):
        compare_series(sa, sb, *ctx, bench="pingpong", size=64)
    with pytest.raises(UsageError) as exc:
        compare_series(sa, sb, *ctx, bench="allreduce")
    assert "run A (ra)" in str(exc.value) and "run B (rb)" in str(exc.value)
    cmp = compare_series(sa, sb, *ctx, bench="pingpong", size=8)
    assert [(r.bench, r.size) for r in cmp.rows] == [("pingpong", 8)]
    assert cmp.only_a == [] and cmp.only_b == []


def test_series_without_valid_samples_is_skipped():
    a = {("pingpong", 8): _lognormal(1), ("pingpong", 64): []}
    b = {("pingpong", 8): _lognormal(2), ("pingpong", 64): _lognormal(3)}
    cmp = compare_series(_series(a), _series(b), Run.from_context({"run_id": "a"}), Run.from_context({"run_id": "b"}))
    assert cmp.skipped == [(("pingpong", "mpi", 64), "no valid samples in run A")]
    assert len(cmp.rows) == 1


def test_bad_noise_and_alpha():
    s = _series({("pingpong", 8): _lognormal(1)})
    with pytest.raises(UsageError, match="noise"):
        compare_series(s, s, Run.from_context({}), Run.from_context({}), noise=1.5)
    with pytest.raises(UsageError, match="alpha"):
        compare_series(s, s, Run.from_context({}), Run.from_context({}), alpha=0.0)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    a = build_run(out, A_ID, "2024-04-01T12:00:00+00:00", sizes=[1, 64, 4096, 262144])
    b = build_run(out, B_ID, "2024-04-02T12:00:00+00:00", factor=1.10, bw_factor=1.10,
                  seed=4, mpi="mpich", sizes=[1, 64, 4096, 262144])
    return out, a, b


def test_stored_runs_across_libraries(runs):
    _, a, b = runs
    cmp = compare(a, b)
    assert (cmp.run_a, cmp.run_b) == (A_ID, B_ID)
    assert cmp.b.mpi == "mpich"
    verdicts = {(r.bench, r.size): r.verdict for r in cmp.rows}
    assert len(verdicts) == 12
    # Times 10% longer are slower; bandwidths 10% higher are faster.
    assert all(v == "slower" for (bench, _), v in verdicts.items() if bench != "bw")
    assert all(v == "faster" for (bench, _), v in verdicts.items() if bench == "bw")
    # Geomean of time ratios: 8 rows at 1.1 and 4 at 1/1.1 -> 1.1^(4/12).
    assert cmp.geomean.contains(1.1 ** (4 / 12))
    assert cmp.counts() == {"faster": 4, "slower": 8, "same": 0, "insufficient": 0}


def test_stored_runs_seeded(runs):
    _, a, b = runs
    one, two = compare(a, b, seed=5), compare(a, b, seed=5)
    assert [r.ratio for r in one.rows] == [r.ratio for r in two.rows]
    assert one.seed == 5 and one.to_dict()["seed"] == 5
    other = compare(a, b, seed=6)
    assert [r.ratio for r in one.rows] != [r.ratio for r in other.rows]


def test_run_against_itself_is_same(runs):
    _, a, _ = runs
    cmp = compare(a, a)
    assert all(r.verdict == "same" and r.ratio.point == 1.0 for r in cmp.rows)
    assert cmp.geomean.point == pytest.approx(1.0)


# ---------------------------------------------------------------- too few samples for a verdict

def test_min_samples_is_what_the_test_needs():
    from mpiscope.stats.compare import min_samples
    assert min_samples(0.05) == 6       # a median's 95% CI needs 6; the U test 4
    assert min_samples(0.002) == 7      # 6 against 6 cannot reach p < 0.0022
    assert min_samples(0.0005) == 8


def test_one_sample_gets_no_verdict():
    """A 10% slowdown measured once in B: significant against 200 samples of A
    by the U test, yet no verdict."""
    a = _lognormal(1)
    ratio, p, v, _ = compare_samples(a, [1.10 * np.median(a)], np.random.default_rng(1))
    assert v == "insufficient" and ratio.point == pytest.approx(1.10)
    # Six against six, clearly apart: a verdict; at alpha 0.001 the test cannot get there.
    a6, b6 = _lognormal(1, n=6), 1.5 * _lognormal(2, n=6)
    assert compare_samples(a6, b6, np.random.default_rng(1))[2] == "slower"
    assert compare_samples(a6, b6, np.random.default_rng(1), alpha=0.001)[2] == "insufficient"
    assert compare_samples(a6[:5], b6, np.random.default_rng(1))[2] == "insufficient"


def test_insufficient_rows_are_shown_not_summed():
    from mpiscope.views.compare import format_compare
    a = {("pingpong", 8): _lognormal(1), ("pingpong", 64): _lognormal(3)}
    b = {("pingpong", 8): _lognormal(2), ("pingpong", 64): [3.0 * np.median(_lognormal(3))]}
    cmp = compare_series(_series(a), _series(b), Run.from_context({"run_id": "a"}),
                         Run.from_context({"run_id": "b"}))
    assert [r.verdict for r in cmp.rows] == ["same", "insufficient"]
    assert cmp.counts()["insufficient"] == 1 and cmp.to_dict()["min_samples"] == 6
    # The geometric mean is that of the judged row alone, not pulled up by the 3x.
    assert cmp.geomean.point == pytest.approx(cmp.rows[0].time_ratio)
    text = format_compare(cmp)
    assert "over 1 benchmark × sizes" in text
    assert "insufficient (1): fewer than 6 valid samples in a run" in text
