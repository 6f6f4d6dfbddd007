# SPDX-License-Identifier: BSD-3-Clause
"""Per-series quality verdicts (stats/quality.py): flags on runs with known
defects, the grouped warning lines of `run` and `show`, and verdicts stored
with a run."""

import json

import numpy as np
import pytest

from mpiscope.cli.main import build_parser
from mpiscope.measure.runner import _store_quality
from mpiscope.stats import quality
from mpiscope.stats.rto import as_rto
from mpiscope.store.ingest import ingest, load
from mpiscope.store.layout import QUALITY_FILE
from mpiscope.store.run import SeriesRecord
from mpiscope.store.samples import Samples
from mpiscope.store.series import all_series_samples
from mpiscope.views import show as views
from rawgen import RunBuilder, SeriesSpec, context_for

US = 1e-6
RUN_ID = "20240501-120000-qqqq"


def _tight(median, n=20, seed=0, sigma=0.01):
    return list(median * np.random.default_rng(seed).lognormal(0.0, sigma, n))


def _build(out):
    """A run whose every series has a known defect, or none."""
    run_dir = out / RUN_ID
    rb = RunBuilder(run_dir, nranks=2)
    # 4 of 10 repetitions invalid (40%): heavy; 6 valid ones are enough.
    rb.add(SeriesSpec("pingpong", 8, _tight(1.0 * US, 10, 1), late=tuple((1, i) for i in range(4))))
    # 2 of 20 (10%): not heavy.
    rb.add(SeriesSpec("pingpong", 16, _tight(1.1 * US, 20, 2), late=((1, 3), (1, 7))))
    rb.add(SeriesSpec("pingpong", 32, [1.2 * US]))                       # one sample
    # 8 B three times slower than 64 B: non-monotone. 128 B 2% faster than
    # 64 B, CIs apart: within the margin, not flagged.
    rb.add(SeriesSpec("oneway", 8, _tight(3.0 * US, 20, 3)))
    rb.add(SeriesSpec("oneway", 64, _tight(1.0 * US, 20, 4, sigma=0.001)))
    rb.add(SeriesSpec("oneway", 128, _tight(0.98 * US, 20, 5, sigma=0.001)))
    # Bandwidth falling with size: not a latency, never non-monotone.
    rb.add(SeriesSpec("bw", 8, _tight(100e6, 20, 6)))
    rb.add(SeriesSpec("bw", 64, _tight(50e6, 20, 7)))
    # Two states of equal weight; beside it a single one.
    rng = np.random.default_rng(8)
    two = np.concatenate([rng.normal(2.0, 0.02, 100), rng.normal(4.0, 0.04, 100)]) * US
    rb.add(SeriesSpec("allreduce", 8, list(rng.permutation(two))))
    rb.add(SeriesSpec("allreduce", 64, _tight(5.0 * US, 200, 9)))
    rb.add(SeriesSpec("ring", 8, _tight(2.0 * US, 20, 10), stop="time_budget"))
    rb.add(SeriesSpec("barrier", 0, _tight(1.5 * US, 20, 11), start="barrier-fallback"))
    rb.add(SeriesSpec("bibw", 8, [], stop="skipped"))
    rb.write()
    ctx = context_for(run_id=RUN_ID, benches=["pingpong", "oneway", "bw", "allreduce", "ring",
                                              "barrier", "bibw"],
                      plan={"reps_min": 10, "reps_max": 100000, "ci_width": 0.02, "time_budget": 1.0},
                      rto_min=as_rto(0.2))  # read on the measured host, as the runner records it
    (run_dir / "context.json").write_text(json.dumps(ctx))
    table = ingest(run_dir, ctx)
    return run_dir, table


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    run_dir, table = _build(out)
    _, run = load(run_dir)
    verdicts = quality.run_verdicts(all_series_samples(table, run), run)
    return out, run_dir, run, {(v.bench, v.size): v for v in verdicts}


EXPECTED_FLAGS = {
    ("pingpong", 8): ("heavy_invalid",),
    ("pingpong", 16): (),
    ("pingpong", 32): ("few_samples",),
    ("oneway", 8): ("non_monotone",),
    ("oneway", 64): (),
    ("oneway", 128): (),
    ("bw", 8): (),
    ("bw", 64): (),
    ("allreduce", 8): ("bimodal",),
    ("allreduce", 64): (),
    ("ring", 8): ("ci_not_reached",),
    ("barrier", 0): ("start",),
    ("bibw", 8): (),
}


def test_every_flag_where_the_defect_is(built):
    _, _, _, by = built
    assert {k: v.flags for k, v in by.items()} == EXPECTED_FLAGS


def test_verdict_fields(built):
    _, _, _, by = built
    pp = by[("pingpong", 8)]
    assert (pp.n, pp.invalid, pp.invalid_share, pp.stop, pp.ci_reached) == (6, 4, 0.4, "ci", True)
    assert by[("pingpong", 16)].invalid_share == pytest.approx(0.1)
    assert by[("pingpong", 32)].n == 1 and np.isnan(by[("pingpong", 32)].ci_halfwidth)
    assert by[("ring", 8)].ci_reached is False and by[("ring", 8)].stop == "time_budget"
    assert by[("barrier", 0)].start == "barrier-fallback"
    assert by[("pingpong", 16)].start is None
    skipped = by[("bibw", 8)]
    assert skipped.skipped and skipped.n == 0 and skipped.ci_reached is None
    # The pooled median's CI relative to it: small for tight samples.
    assert 0 < by[("oneway", 64)].ci_halfwidth < 0.01
    assert "at 64 B" in by[("oneway", 8)].details["non_monotone"]
    assert by[("allreduce", 8)].details["bimodal"] == "modes of 50%, 50%"


def test_grouped_warnings_one_line_per_kind(built):
    _, _, run, by = built
    lines = quality.warnings(list(by.values()), run)
    assert lines == [
        "1 of 13 series: fewer than 6 valid samples (the median has no 95% CI) (pingpong 32 B) — "
        "raise --reps-min (was 10) or --time-budget",
        "1 of 13 series: more than 25% of samples invalid (late starts) (pingpong 8 B) — "
        "rerun with --sync barrier, or on less loaded nodes",
        "1 of 13 series: the CI of the median did not reach the ±2% target (stopped by: time_budget 1) "
        "(ring 8 B) — raise --time-budget (was 1.0 s) or accept a wider --ci-width",
        "1 of 13 series: slower than the next larger size by more than 5%, beyond both CIs "
        "(oneway 8 B) — rerun with --launches 3: a protocol or algorithm switch repeats in every "
        "launch, a disturbance does not",
        "1 of 13 series: two or more modes of at least 10% each (allreduce 8 B) — rerun with "
        "--launches 3 to see whether the modes follow the launch (placement), or with fewer ranks "
        "than CPUs, where ranks are pinned to cores",
        "1 of 13 series: repetitions did not all start as --sync window says (barrier-fallback) "
        "(barrier 0 B) — rerun with --sync barrier for one start scheme throughout",
    ]
    assert quality.headline(list(by.values())) == "6 of 12 series pass every check (1 skipped)"


def test_many_flagged_series_are_one_line_with_examples():
    v = [quality.Verdict("pingpong", "mpi", 2 ** k, "s", 2, 0, "ci", True, float("nan"),
                         flags=("few_samples",)) for k in range(10)]
    lines = quality.warnings(v + [quality.Verdict("bw", "mpi", 8, "B/s", 50, 0, "ci", True, 0.01)])
    assert len(lines) == 1
    assert lines[0].startswith("10 of 11 series: fewer than 6 valid samples")
    assert "(pingpong 1 B, pingpong 2 B, pingpong 4 B and 7 more)" in lines[0]


def test_runner_stores_verdicts_and_show_reads_them(tmp_path):
    run_dir, table = _build(tmp_path)
    assert not (run_dir / QUALITY_FILE).exists()
    computed = [r["quality"]["flags"] for r in views.show_rows(run_dir)]  # no verdicts stored: computed
    _store_quality(run_dir, table)
    doc = json.loads((run_dir / QUALITY_FILE).read_text())
    assert doc["format"] == "mpiscope-quality" and doc["thresholds"]["min_samples"] == 6
    assert [d["flags"] for d in doc["series"]] == computed
    # What is stored is what is shown: change it, and show says so.
    doc["series"][1]["flags"] = ["bimodal"]
    (run_dir / QUALITY_FILE).write_text(json.dumps(doc))
    assert views.show_rows(run_dir)[1]["quality"]["flags"] == ["bimodal"]
    # Stored verdicts of other series (or a damaged file) are not used.
    doc["series"] = doc["series"][:-1]
    (run_dir / QUALITY_FILE).write_text(json.dumps(doc))
    assert [r["quality"]["flags"] for r in views.show_rows(run_dir)] == computed
    (run_dir / QUALITY_FILE).write_text("{not json")
    assert [r["quality"]["flags"] for r in views.show_rows(run_dir)] == computed


def _cli(argv):
    args = build_parser().parse_args(argv)
    return args.func(args)


def test_show_groups_warnings_and_prints_flags(built, capsys):
    out = built[0]
    assert _cli(["show", RUN_ID, "--out", str(out)]) == 0
    captured = capsys.readouterr()
    warnings = [l for l in captured.err.splitlines() if l.startswith("mpiscope: warning:")]
    assert len(warnings) == 6 == len(captured.err.splitlines())
    assert warnings[1].startswith("mpiscope: warning: 1 of 13 series: more than 25% of samples invalid")
    header, *rows = captured.out.splitlines()[1:]
    assert header.split()[-2:] == ["stop", "flags"]
    flags = {(r.split()[0], int(r.split()[1])): r.split()[-1] for r in rows}
    assert flags[("pingpong", 8)] == "heavy_invalid" and flags[("pingpong", 16)] == "-"

    assert _cli(["show", RUN_ID, "--json", "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["quality"]["headline"] == "6 of 12 series pass every check (1 skipped)"
    assert len(doc["quality"]["warnings"]) == 6
    row = doc["rows"][0]
    assert row["quality"]["flags"] == ["heavy_invalid"] and row["quality"]["invalid_share"] == 0.4
    assert row["quality"]["ci_reached"] is True


def test_loggp_save_refuses_a_model_from_one_sample(tmp_path, capsys):
    from mpiscope.cli.main import main

    for run_id, n in (("20240601-000000-one1", 1), ("20240601-000001-many", 20)):
        rb = RunBuilder(tmp_path / run_id, nranks=2)
        rb.add(SeriesSpec("oneway", 8, _tight(25.5 * US, n, 12)))
        rb.write()
        ctx = context_for(run_id=run_id, benches=["oneway"])
        (tmp_path / run_id / "context.json").write_text(json.dumps(ctx))
        ingest(tmp_path / run_id, ctx)
    target = tmp_path / "model.json"
    argv = ["loggp", "20240601-000000-one1", "--save", str(target), "--out", str(tmp_path)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "not saving a machine model from insufficient data: EEL rests on 1 valid sample " \
           "(oneway, 8 B, median)" in err
    assert "at least 6 valid samples" in err
    assert not target.exists() and list(tmp_path.glob("*.json")) == []
    assert main(["loggp", "20240601-000001-many", "--save", str(target), "--out", str(tmp_path)]) == 0
    assert json.loads(target.read_text())["params"]["EEL"]["point"] == pytest.approx(25.5 * US, rel=0.05)


def test_report_opens_with_the_summary_card_and_quality_banner(built, tmp_path):
    import html as html_lib

    from mpiscope.cli.report import write_report
    from mpiscope.report.card_data import card
    from mpiscope.store.series import all_series_samples

    _, run_dir, run, by = built
    table, _ = load(run_dir)
    series = all_series_samples(table, run)
    c = card("r", series, quality.verdicts_of(run_dir, series, run), run)
    assert (c["latency"]["bench"], c["latency"]["size"]) == ("pingpong", 8)
    assert c["latency"]["median"] == pytest.approx(1.0, rel=0.03)          # µs
    assert c["latency"]["flags"] == ["heavy_invalid"]
    (bw,) = c["bandwidth"]                                                 # bibw was skipped
    assert (bw["bench"], bw["size"]) == ("bw", 8) and bw["median"] == pytest.approx(100, rel=0.03)
    rows = {r["bench"]: r["cells"] for r in c["collectives"]}
    assert set(rows) == {"allreduce", "ring"}
    assert rows["allreduce"][0]["flags"] == ["bimodal"] and rows["allreduce"][1] is None
    assert [x["bench"] for x in c["sizeless"]] == ["barrier"]
    assert not c["clean"] and len(c["warnings"]) == 6

    text = html_lib.unescape(write_report([run_dir], tmp_path / "r.html", jobs=0).read_text())
    assert text.index('id="summary"') < text.index('id="bench-')
    assert "Quality: 6 of 12 series pass every check (1 skipped)." in text
    for line in c["warnings"]:
        assert line in text
    assert "latency, 8 B (pingpong)" in text and "peak bandwidth (bw, at 8 B)" in text


def test_a_verdict_that_fails_does_not_cost_the_run(tmp_path, monkeypatch, capsys):
    run_dir, table = _build(tmp_path)

    def broken(series, run):
        raise ValueError("a bug in a check")
    monkeypatch.setattr(quality, "run_verdicts", broken)
    _store_quality(run_dir, table)       # returns: the runner goes on to store the run
    assert not (run_dir / QUALITY_FILE).exists()
    assert "quality verdicts not stored (ValueError('a bug in a check'))" in capsys.readouterr().err


@pytest.mark.parametrize("start, flagged", [("window", False), ("barrier", False), ("window,barrier", True)])
def test_sync_auto_expects_window_or_barrier_starts_and_flags_only_a_fallback(start, flagged):
    # --sync auto chooses window or barrier starts per series: either is as
    # the run says; window starts that fell back to barriers are not.
    values = np.array(_tight(2.0 * US, 20, 12))
    s = Samples(values, 0, np.arange(20), np.zeros(20), np.zeros(20), np.full(20, -1))
    rec = SeriesRecord("allreduce", "mpi", 8, 0, 20, "ci", start=start)
    v, _ = quality.series_verdict("allreduce", "mpi", 8, s, [rec], sync_method="auto")
    assert ("start" in v.flags) == flagged, v


def test_no_ci_target_is_never_a_target_not_reached():
    # --ci-width 0: only --reps-max and --time-budget stop a series; that is no defect.
    values = np.array(_tight(2.0 * US, 20, 13))
    s = Samples(values, 0, np.arange(20), np.zeros(20), np.zeros(20), np.full(20, -1))
    rec = SeriesRecord("allreduce", "mpi", 8, 0, 20, "reps_max", start="window")
    v, _ = quality.series_verdict("allreduce", "mpi", 8, s, [rec], sync_method="window", ci_width=0)
    assert v.ci_reached is None and "ci_not_reached" not in v.flags
    v, _ = quality.series_verdict("allreduce", "mpi", 8, s, [rec], sync_method="window", ci_width=0.02)
    assert v.ci_reached is False and "ci_not_reached" in v.flags


def test_a_fallback_in_one_launch_of_several_is_named_as_a_fallback():
    values = np.array(_tight(2.0 * US, 20, 14))
    s = Samples(values, 0, np.arange(20), np.zeros(20), np.zeros(20), np.full(20, -1))
    recs = [SeriesRecord("allreduce", "mpi", 8, k, 20, "ci", start=start)
            for k, start in enumerate(("window", "window,barrier"))]
    v, _ = quality.series_verdict("allreduce", "mpi", 8, s, recs, sync_method="window")
    assert "start" in v.flags
    (line,) = quality.warnings([v])
    assert "window starts fell back to barrier starts" in line, line
