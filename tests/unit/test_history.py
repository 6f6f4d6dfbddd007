# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope history` on synthetic nights of stored runs (history_runs.py):
change points of known steps found at the right run, noise and steps inside
the runs' own intervals not flagged, what changed named, the --where
filters, the --check gate's exit codes, and the input it refuses. No MPI."""

import json
import math

import numpy as np
import pytest

from history_runs import night_context, noisy_levels, write_night, write_series
from mpiscope.cli.main import main
from mpiscope.common.errors import UsageError
from mpiscope.history.changes import differences
from mpiscope.history.detect import FASTER, SLOWER, change_points, level
from mpiscope.history.points import load_points
from mpiscope.history.series import group, parse_where, select
from mpiscope.stats import quality
from rawgen import build_demo_run
from schemas import validate


def _detect(levels, halfwidth=0.01, unit="s", threshold=0.02):
    m = np.asarray(levels)
    return change_points(m, m * (1 - halfwidth), m * (1 + halfwidth), unit, threshold)


# ---------------------------------------------------------------- detection

@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("at", [6, 20, 33])
def test_a_step_of_ten_percent_is_found_at_its_run(seed, at):
    found = _detect(noisy_levels(40, at, 0.10, seed=seed))
    assert [i for i, _ in found] == [at]
    s = found[0][1]
    assert s.direction == SLOWER and s.low < 0.10 < s.high and s.low > 0.02


@pytest.mark.parametrize("seed", range(10))
def test_an_unchanged_noisy_series_has_no_change_point(seed):
    assert _detect(noisy_levels(60, noise=0.015, seed=seed)) == []


def test_one_odd_night_is_not_a_change():
    levels = noisy_levels(30, seed=3)
    levels[14] *= 1.3   # one slow night, then back
    assert _detect(levels) == []


def test_one_night_off_inside_the_runs_intervals_is_not_flagged_the_same_step_sustained_is():
    quiet = noisy_levels(40, noise=0.005, seed=2)
    one_night = list(quiet)
    one_night[20] *= 1.07   # one night 7% slower, inside its ±5% interval
    assert _detect(one_night, halfwidth=0.05) == []
    sustained = noisy_levels(40, 20, 0.07, noise=0.005, seed=2)   # 7% slower from night 20 on
    assert [i for i, _ in _detect(sustained, halfwidth=0.05)] == [20]
    (_, early), = _detect(sustained[:23], halfwidth=0.05)
    (_, late), = _detect(sustained, halfwidth=0.05)
    assert late.high - late.low < early.high - early.low   # 20 nights of it known better than 3


def test_a_step_below_the_threshold_is_not_flagged():
    levels = noisy_levels(40, 20, 0.10, noise=0.002, seed=4)
    assert [i for i, _ in _detect(levels, halfwidth=0.002)] == [20]
    assert _detect(levels, halfwidth=0.002, threshold=0.15) == []


def test_directions_of_times_and_bandwidths():
    faster = _detect(noisy_levels(30, 15, -0.10, seed=5))
    assert [(i, s.direction) for i, s in faster] == [(15, FASTER)]
    lower_bandwidth = _detect(noisy_levels(30, 15, -0.10, seed=5, base=10e9), unit="B/s")
    assert [(i, s.direction) for i, s in lower_bandwidth] == [(15, SLOWER)]


def test_two_steps_are_both_found():
    levels = noisy_levels(45, 15, 0.10, seed=6)
    levels[30:] = [v * 1.10 for v in levels[30:]]
    assert [i for i, _ in _detect(levels)] == [15, 30]


def test_the_candidates_are_pelts_with_the_l2_cost():
    import ruptures

    from mpiscope.history.detect import MIN_SEGMENT, _candidates, _signal, penalty

    levels = noisy_levels(80, 30, 0.05, noise=0.02, seed=7)
    levels[55:] = [v * 0.9 for v in levels[55:]]
    pelt = ruptures.Pelt(model="l2", min_size=MIN_SEGMENT, jump=1).fit(_signal(levels))
    expected = [b for b in pelt.predict(pen=penalty(80)) if b < 80]
    assert len(expected) >= 2 and _candidates(levels) == expected


def _halfwidth(lv):
    return math.log(lv.high / lv.low) / 2


def test_a_level_narrows_with_its_runs_as_a_median_of_n_does():
    one = level([10.0], [9.5], [10.5])
    assert (one.median, one.low, one.high, one.runs) == (10.0, 9.5, 10.5, 1)
    four, sixteen = (level([10.0] * n, [9.5] * n, [10.5] * n) for n in (4, 16))
    assert _halfwidth(sixteen) < _halfwidth(four) < _halfwidth(one)
    assert _halfwidth(four) / _halfwidth(sixteen) == pytest.approx(2.0)   # 1/√n
    assert four.low < 10.0 < four.high


def test_a_level_is_never_narrower_than_the_spread_of_its_runs():
    rng = np.random.default_rng(3)
    medians = 10.0 * (1 + rng.normal(0.0, 0.05, 30))   # runs spread ±5%, each claiming ±0.1%
    lv = level(medians, medians * 0.999, medians * 1.001)
    assert lv.high / lv.low - 1 > 0.02
    few = level([10.0, 13.0, 10.1], [9.99, 12.99, 10.09], [10.01, 13.01, 10.11])
    assert (few.low, few.high) == (10.0, 13.0)   # three runs: bounded by their lowest and highest


# ---------------------------------------------------------------- what changed

def test_differences_name_what_changed_and_what_is_unknown():
    before = night_context("a", "2026-03-01T02:00:00", env={"UCX_TLS": "rc"})
    after = night_context("b", "2026-03-02T02:00:00", mpi_version="4.1.6", kernel="6.1.0-21-amd64",
                          env={"OMPI_MCA_btl_vader_single_copy_mechanism": "none"})
    found = {d.what: (d.before, d.after) for d in differences(before, after)}
    assert found["MPI version"] == ("4.1.5", "4.1.6")
    assert found["kernel"] == ("6.1.0-18-amd64", "6.1.0-21-amd64")
    assert found["$UCX_TLS"] == ("rc", "unset")
    assert found["$OMPI_MCA_btl_vader_single_copy_mechanism"] == ("unset", "none")
    assert "nodes" not in found and "Slurm partition" not in found
    old = {k: v for k, v in before.items() if k != "machine"}   # a run stored without it
    assert {d.what: d.before for d in differences(old, before)}["CPU governor"] == "unknown"


# ---------------------------------------------------------------- stored runs

def test_medians_of_a_run_without_them_in_quality_json_come_from_its_samples(tmp_path):
    build_demo_run(tmp_path)   # ingested only: no quality.json
    points = {(p.bench, p.size): p for p in load_points([tmp_path])}
    p = points[("pingpong", 0)]
    assert math.isclose(p.median, 0.2e-6, rel_tol=1e-6) and p.ci_low <= p.median <= p.ci_high
    assert p.context["hosts"]   # from the samples file's metadata


def test_quality_json_keeps_medians_and_reads_old_files(tmp_path):
    v = quality.Verdict("pingpong", "mpi", 8, "s", 10, 0, "ci", True, 0.01, median=2e-6,
                        ci_low=1.9e-6, ci_high=2.1e-6)
    quality.save(tmp_path, [v])
    assert quality.load_stored(tmp_path)[0].median == 2e-6
    doc = json.loads((tmp_path / "quality.json").read_text())
    for key in ("median", "ci_low", "ci_high"):
        del doc["series"][0][key]
    (tmp_path / "quality.json").write_text(json.dumps(doc))
    assert math.isnan(quality.load_stored(tmp_path)[0].median)


def test_series_group_what_compares(tmp_path):
    write_night(tmp_path, 0, {("allreduce", 8): 1e-6, ("allreduce", 64): 2e-6})
    write_night(tmp_path, 1, {("allreduce", 8): 1e-6}, mpi_version="4.1.6")
    write_night(tmp_path, 2, {("allreduce", 8): 1e-6}, hosts={"n01": 8, "n02": 8, "n03": 8, "n04": 8})
    points = load_points([tmp_path])
    series = group(points)
    assert [(s.key.size, s.key.nodes, s.key.ppn, len(s.points)) for s in series] == \
        [(8, 2, "16", 2), (8, 4, "8", 1), (64, 2, "16", 1)]
    assert len(group(points, split_version=True)) == 4   # 4.1.5 and 4.1.6 apart


def test_several_roots_make_one_history(tmp_path):
    levels = noisy_levels(12, seed=11)
    ids = write_series(tmp_path / "a", levels[:6])
    moved = write_series(tmp_path / "b", levels)[6:]   # nights 6-11 in b (its 0-5 repeat a's)
    points = load_points([tmp_path / "a", tmp_path / "b"])
    assert [p.run_id for p in points] == ids + moved   # a run id in both roots counts once


def test_where_filters(tmp_path):
    write_series(tmp_path, noisy_levels(10))
    points = load_points([tmp_path])
    assert len(select(points, [parse_where("since=2026-03-05")])) == 6
    assert len(select(points, [parse_where("until=2026-03-05")])) == 5
    assert len(select(points, [parse_where("size=64K"), parse_where("bench=allreduce")])) == 10
    assert select(points, [parse_where("np=16")]) == []
    assert len(select(points, [parse_where("np=32")])) == 10
    assert select(points, [parse_where("label=nightly")]) == []
    labelled = write_night(tmp_path, 10, {("allreduce", 65536): 2e-5}, label="nightly")
    chosen = select(load_points([tmp_path]), [parse_where("label=nightly,weekly")])
    assert [p.run_id for p in chosen] == [labelled]
    for bad in ("color=red", "size=big", "np=x", "since=yesterday", "bench=", "nokey"):
        with pytest.raises(UsageError):
            parse_where(bad)


# ---------------------------------------------------------------- the command

def _exit_code(argv):
    """mpiscope's exit code, whether the parser refused the line or the command did."""
    try:
        return main(argv)
    except SystemExit as exc:
        return exc.code


@pytest.fixture
def stepped(tmp_path):
    """30 nights, 10% slower from night 20 on, where Open MPI 4.1.6 came."""
    out = tmp_path / "out"
    ids = write_series(out, noisy_levels(30, 20, 0.10), changed_from=20, mpi_version="4.1.6")
    return out, ids


def test_history_names_the_change_and_what_changed(stepped, capsys):
    out, ids = stepped
    assert main(["history", str(out)]) == 0
    text = capsys.readouterr().out
    assert f"change from run {ids[20]}" in text and "slower by" in text
    assert "MPI version: 4.1.5 → 4.1.6" in text


def test_history_json_validates(stepped, capsys):
    out, ids = stepped
    assert main(["history", "--out", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    validate("history", doc)
    (series,) = doc["series"]
    (change,) = series["changes"]
    assert change["first_after"] == ids[20] and change["last_before"] == ids[19]
    assert change["direction"] == "slower" and change["step_low"] > 0.02
    assert {"what": "MPI version", "before": "4.1.5", "after": "4.1.6"} in change["changed"]
    assert "check" not in doc


def test_check_passes_when_the_newest_run_is_like_its_baseline(tmp_path, capsys):
    out = tmp_path / "out"
    write_series(out, noisy_levels(30, 20, -0.10))   # 10% faster from night 20 on: the new normal
    assert main(["history", str(out), "--check", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    validate("history", doc)
    assert doc["check"]["regressions"] == 0
    assert doc["series"][0]["check"]["status"] == "same"
    assert len(doc["series"][0]["check"]["baseline"]) == 9   # the runs since the change


def test_a_regression_fails_the_gate_every_night_until_the_level_comes_back(tmp_path, capsys):
    out = tmp_path / "out"
    levels = noisy_levels(30, 20, 0.10, seed=11)   # 10% slower from night 20 ...
    levels[26:] = [v / 1.10 for v in levels[26:]]  # ... back from night 26 on
    ids, judged = [], {}
    for night, m in enumerate(levels):   # one night at a time, the gate after each
        ids.append(write_night(out, night, {("allreduce", 65536): m}))
        if night in (19, 20, 21, 22, 25, 26, 27):
            code = main(["history", str(out), "--check", "--json"])
            check = json.loads(capsys.readouterr().out)["series"][0]["check"]
            judged[night] = (code, check["status"], check["since"])
    assert judged[19] == (0, "same", None)
    assert judged[20] == (5, "regression", None)          # the first slow night: no segment yet
    for night in (21, 22, 25):                            # the nights after it, still slow
        assert judged[night] == (5, "regression", ids[20]), night
    assert judged[26][:2] == (0, "same") and judged[27][:2] == (0, "same")   # back


def test_check_exits_5_on_a_regression_and_names_it(tmp_path, capsys):
    out = tmp_path / "out"
    levels = noisy_levels(15, 14, 0.10, seed=8)    # the newest night is 10% slower
    ids = write_series(out, levels, changed_from=14, env={"UCX_TLS": "tcp"})
    assert main(["history", str(out), "--check"]) == 5
    text = capsys.readouterr().out
    assert f"check: REGRESSION: newest run {ids[14]} slower by" in text
    assert "$UCX_TLS: unset → tcp" in text
    assert main(["history", str(out), "--check", "--json"]) == 5
    doc = json.loads(capsys.readouterr().out)
    validate("history", doc)
    assert doc["check"]["regressions"] == 1 and doc["series"][0]["check"]["status"] == "regression"


def test_the_night_after_a_jump_no_change_point_shows_yet_is_still_a_regression(tmp_path, capsys):
    out = tmp_path / "out"
    # Nights of 45 us with one fast outlier; night 6 much slower, night 7 slower too but
    # less: too few and too spread for PELT to make a segment of them; night 8 back.
    levels = [v * 1e-6 for v in (45.4, 28.0, 45.4, 46.4, 45.7, 42.0, 105.0, 61.4, 45.0)]
    ids = []
    judged = {}
    for night, m in enumerate(levels):
        ids.append(write_night(out, night, {("allreduce", 65536): m}))
        if night >= 6:
            code = main(["history", str(out), "--check", "--json"])
            doc = json.loads(capsys.readouterr().out)
            assert doc["series"][0]["changes"] == []   # no change point shows the slow nights
            check = doc["series"][0]["check"]
            judged[night] = (code, check["status"], check["since"], len(check["baseline"]))
    assert judged[6] == (5, "regression", None, 6)
    assert judged[7] == (5, "regression", ids[6], 6)   # against the six nights before the jump
    assert judged[8][:2] == (0, "same")                # back


def test_check_against_a_baseline_run_or_date(tmp_path, capsys):
    out = tmp_path / "out"
    levels = noisy_levels(12, 6, 0.10, seed=9)    # slower since night 6
    ids = write_series(out, levels)
    assert main(["history", str(out), "--check"]) == 5   # against the runs before night 6
    assert f"slower since run {ids[6]}" in capsys.readouterr().out
    assert main(["history", str(out), "--check", "--baseline", ids[2]]) == 5
    assert main(["history", str(out), "--check", "--baseline", "2026-03-08"]) == 0   # accepted


@pytest.mark.parametrize("argv, says", [
    (["--where", "colour=red"], "the key must be one of"),
    (["--where", "bench=bcast"], "no runs match --where bench=bcast"),
    (["--check", "--baseline", "20990101-000000-ffff"], "no run of series"),
    (["--check", "--baseline", "2099-01-01"], "has no run from then on"),
    (["--baseline", "2026-03-01"], "give --check too"),
])
def test_bad_input_exits_2(stepped, capsys, argv, says):
    out, _ = stepped
    assert _exit_code(["history", str(out), *argv]) == 2
    err = capsys.readouterr().err
    assert "mpiscope: error:" in err and says in err and "Traceback" not in err


def test_a_root_without_runs_exits_2(tmp_path, capsys):
    assert main(["history", str(tmp_path)]) == 2
    assert "no completed measurement runs under" in capsys.readouterr().err


def test_check_of_series_with_one_run_each_exits_2(tmp_path, capsys):
    write_night(tmp_path, 0, {("allreduce", 8): 1e-6})
    assert main(["history", str(tmp_path), "--check"]) == 2
    assert "one run" in capsys.readouterr().err


# ---------------------------------------------------------------- the terminal's view

def test_the_threshold_default_is_compares():
    from mpiscope.history import DEFAULT_THRESHOLD
    from mpiscope.stats.compare import DEFAULT_NOISE

    assert DEFAULT_THRESHOLD == DEFAULT_NOISE


def test_a_long_series_shows_its_newest_runs_and_those_around_each_change(tmp_path, capsys):
    ids = write_series(tmp_path, noisy_levels(300, 100, 0.10, noise=0.005, seed=8), halfwidth=0.005)
    assert main(["history", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    shown = [rid for rid in ids if rid in text]
    assert shown == [ids[99], ids[100], *ids[-12:]]
    assert "… 99 runs" in text and "… 187 runs" in text
    spark = text.splitlines()[1]
    assert "(a mark: the median of 5 runs)" in spark and len(spark.split()[0]) == 60
    assert main(["history", str(tmp_path), "--rows", "0"]) == 0
    every = capsys.readouterr().out
    assert all(rid in every for rid in ids) and "…" not in every
