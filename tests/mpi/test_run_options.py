# SPDX-License-Identifier: BSD-3-Clause
"""Run options that change how the engine measures, on real Open MPI ranks."""

import json

import pyarrow.compute as pc
import pytest

from mpiscope.store import samples

from mpiscope.store import ingest as store
from runcli import mpiscope, run_ok


def _series(ctx, bench, size):
    return [s for s in ctx["series"] if s["bench"] == bench and s["size"] == size]


def test_stop_reasons_are_recorded(tmp_path):
    # An impossible CI target: reps_max stops one series, the budget the other.
    run, _ = run_ok("-n", 2, "--bench", "pingpong,bw", "--sizes", "8,4M", "--ci-width", 0,
                    "--reps-max", 40, "--time-budget", 0.2, "--sync", "barrier", out=tmp_path)
    table, loaded = store.load(run)
    ctx = loaded.context
    (small,) = _series(ctx, "pingpong", 8)
    assert small["stop"] == "reps_max" and small["reps"] == 40
    (big,) = _series(ctx, "bw", 4 * 1024**2)
    assert big["stop"] in ("time_budget", "reps_max")
    assert big["stop"] == "time_budget" or big["reps"] == 40
    rows = pc.sum(pc.and_(pc.equal(table["bench"], "pingpong"), pc.equal(table["size"], 8))).as_py()
    assert rows == 2 * 40  # one row per rank and repetition


def test_ci_rule_stops_before_reps_max(tmp_path):
    run, _ = run_ok("-n", 2, "--bench", "allreduce", "--sizes", 8, "--ci-width", 0.5,
                    "--reps-max", 100000, "--time-budget", 30, out=tmp_path)
    (s,) = _series(store.load(run)[1].context, "allreduce", 8)
    assert s["stop"] == "ci" and s["reps"] < 100000


def test_a_series_stopped_at_its_ci_target_shows_that_target(tmp_path):
    """The engine's stopping rule and `show` bracket the median with the same
    order statistics of the same samples (barrier starts: local durations, no
    clock model between them), so every series the engine stopped for its CI
    shows a CI within the target; and `run` prints from memory exactly the
    rows `show` reads back from the stored run."""
    run, summary = run_ok("-n", 2, "--bench", "pingpong,allreduce", "--sizes", "1-64:x4",
                          "--ci-width", 0.02, "--time-budget", 0.5, "--sync", "barrier", out=tmp_path)
    stopped = [r for r in summary["rows"] if r["stop"] == "ci"]
    assert stopped, summary["rows"]  # else the check below checks nothing
    for r in stopped:
        half = (r["ci_high"] - r["ci_low"]) / 2 / r["median"]
        assert half <= 0.02 * (1 + 1e-9), r  # 1e-9: the engine's times are on the global clock
    shown = mpiscope("show", run, "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["rows"] == summary["rows"]


def test_several_launches_in_one_run(tmp_path):
    run, _ = run_ok("-n", 2, "--bench", "pingpong", "--sizes", 8, "--launches", 2, "--reps-max", 30,
                    out=tmp_path)
    table, loaded = store.load(run)
    ctx = loaded.context
    assert sorted(pc.unique(table["launch"]).to_pylist()) == [0, 1]
    assert set(samples.sample_values(table, "pingpong", 8).launch) == {0, 1}
    assert len(ctx["launch_commands"]) == 2


@pytest.mark.parametrize("timer", ["clock", "wtime"])
def test_other_timers(tmp_path, timer):
    run, _ = run_ok("-n", 2, "--bench", "pingpong", "--sizes", 8, "--timer", timer, "--reps-max", 50,
                    out=tmp_path)
    _, loaded = store.load(run)
    ctx = loaded.context
    assert ctx["timer"]["name"] == timer
    # A read's cost is a mean over reads, which a busy core stretches: bounded
    # only by what no working timer reaches, 10 ms.
    assert 0 < ctx["timer"]["cost_s"] < 1e-2 and ctx["timer"]["resolution_s"] > 0
    # every timer's cost and resolution are reported, whichever is in use
    assert set(ctx["timers"]) == {"tsc", "clock", "wtime"}
    assert all(0 < t["cost_s"] < 1e-2 and t["resolution_s"] > 0 for t in ctx["timers"].values())
    assert sum(ctx["hosts"].values()) == 2
    # RTO_min as read on the measured host (this one), with where it came from
    (host,) = ctx["hosts"]
    assert ctx["rto_min"]["per_host"][host]["rto_min_s"] == ctx["rto_min"]["rto_min_s"] > 0
    assert host in ctx["rto_min"]["source"]


@pytest.mark.parametrize("timer", ["tsc", "clock"])
def test_timer_tick_and_interval_are_calibrated(tmp_path, timer):
    # The tick is the step every reading moves by: the smallest step seen is a
    # whole number of ticks (clock_gettime's are whole nanoseconds), and the
    # interval, a mean of back-to-back read pairs near their median, is no
    # shorter than the shortest of them.
    run, _ = run_ok("-n", 2, "--bench", "empty", "--timer", timer, "--reps-max", 20, out=tmp_path)
    t = store.load(run)[1].context["timer"]
    assert t["tick_s"] > 0, t
    steps = t["resolution_s"] / t["tick_s"]
    assert steps >= 0.95 and abs(steps - round(steps)) < 0.05, t  # seconds as doubles: ~0.01 ns
    if timer == "clock":
        assert abs(t["tick_s"] * 1e9 - round(t["tick_s"] * 1e9)) < 0.05, t
    assert t["resolution_s"] - t["tick_s"] <= t["interval_s"] < 1e-5, t


def test_cold_cache_and_barrier_sync(tmp_path):
    # No interval target and a generous budget: every series runs its 50 repetitions, however busy the cores.
    run, _ = run_ok("-n", 2, "--bench", "pingpong,allreduce", "--sizes", "1K", "--cache", "cold",
                    "--sync", "barrier", "--reps-max", 50, "--ci-width", 0, "--time-budget", 60, out=tmp_path)
    table, loaded = store.load(run)
    ctx = loaded.context
    assert pc.all(pc.is_nan(table["t_sched"])).as_py()  # no agreed start with barrier sync
    assert len(samples.sample_values(table, "allreduce", 1024)) == 50
    assert ctx["cache"] == "cold" and ctx["sync_method"] == "barrier"
    assert ctx["cold_region_bytes"] >= 4 * 1024  # at least four times the largest buffer


def test_refine_adds_bounded_sizes_and_records_them(tmp_path):
    # A tiny threshold makes every bend count, so refinement certainly happens.
    run, _ = run_ok("-n", 2, "--bench", "pingpong", "--sizes", "64-64K:x16", "--refine",
                    "--refine-threshold", 0.001, "--refine-max", 3, "--reps-max", 50, out=tmp_path)
    table, loaded = store.load(run)
    ctx = loaded.context
    added = ctx["refined_sizes"]["pingpong"]
    assert 1 <= len(added) <= 3
    assert not set(added) & {64, 1024, 16384}
    for size in added:
        assert len(samples.sample_values(table, "pingpong", size)) > 0


def test_refine_with_several_algorithms_measures_new_sizes_for_each(tmp_path):
    # barrier starts: on a loaded machine every windowed start of a short series can be late,
    # and what is tested here is which sizes are measured, not how the starts hold up
    run, _ = run_ok("-n", 2, "--bench", "allgather", "--algo", "ring,bruck", "--sizes", "64-64K:x16",
                    "--refine", "--refine-threshold", 0.001, "--refine-max", 2, "--reps-max", 20,
                    "--sync", "barrier", out=tmp_path)
    table, loaded = store.load(run)
    ctx = loaded.context
    added = ctx["refined_sizes"]["allgather"]
    assert 1 <= len(added) <= 2
    for algo in ("ring", "bruck"):
        for size in added:
            assert len(samples.sample_values(table, "allgather", size, algo=algo)) > 0


def test_the_time_budget_bounds_a_series_before_reps_min(tmp_path):
    # 1000 repetitions of a window at least 5 µs apart cannot fit in 1 ms: the
    # budget wins over --reps-min, and says so as the stop reason.
    run, _ = run_ok("-n", 2, "--bench", "pingpong", "--sizes", 8, "--reps-min", 1000, "--ci-width", 0,
                    "--time-budget", 0.001, "--sync", "window", out=tmp_path)
    (series,) = _series(store.load(run)[1].context, "pingpong", 8)
    assert series["stop"] == "time_budget"
    assert 1 <= series["reps"] < 1000


def test_own_start_barrier_leaves_the_library_barrier_alone(tmp_path):
    """Open MPI's barrier 'two_proc' (5) fails on any communicator but 2 ranks.
    Forced on 3, a run whose repetitions start with MPI_Barrier fails; one
    started by the engine's own barrier (what `mpiscope tune` uses, so that a
    launch forcing a barrier algorithm times its other collectives alike)
    completes."""
    forced = "--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_barrier_algorithm 5"
    # Only --reps-max may stop the series (no CI target, a budget no load exhausts): all 20 run.
    common = ["-n", 3, "--bench", "allreduce", "--sizes", 8, "--sync", "barrier",
              "--reps-max", 20, "--ci-width", 0, "--time-budget", 60, "--launcher-args", forced]
    run, _ = run_ok(*common, "--start-barrier", "own", out=tmp_path / "own")
    ctx = store.load(run)[1].context
    assert ctx["plan"]["start_barrier"] == "own"
    assert all(s["reps"] == 20 for s in _series(ctx, "allreduce", 8))
    p = mpiscope("run", *common, "--json", out=tmp_path / "mpi")
    assert p.returncode != 0, p.stdout[-2000:]
