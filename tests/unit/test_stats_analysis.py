# SPDX-License-Identifier: BSD-3-Clause
"""analyze_series: everything about one series as plain JSON-able data."""

import json

import numpy as np
import pytest

from mpiscope.stats.analysis import analyze_series
from mpiscope.common.jsonable import plain
from mpiscope.stats.estimate import Estimate
from mpiscope.store.samples import series_samples, split_series
from mpiscope.store.ingest import ingest
from mpiscope.store.run import Run
from rawgen import Clock, RunBuilder, SeriesSpec

US = 1e-6
MS = 1e-3
RTO = {"rto_min_s": 0.2, "source": "test"}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    rng = np.random.default_rng(8)
    rb = RunBuilder(tmp_path_factory.mktemp("an") / "run", nranks=4, launches=(0, 1),
                    clocks={1: Clock(0.5, 2.0 ** -12, 100.0), 2: Clock(-0.25)})
    slow = np.where(np.arange(400) % 20 == 7, 200 * MS, 0.0)
    rb.add(SeriesSpec("pingpong", 8, list(1 * MS * rng.lognormal(0, 0.05, 400) + slow),
                      launches=(0, 1), late=((1, 3),)))
    rb.add(SeriesSpec("allreduce", 1024, list(5 * US * rng.lognormal(0, 0.1, 50)),
                      launches=(0, 1)))
    rb.add(SeriesSpec("bw", 65536, list(1e9 * rng.lognormal(0, 0.05, 30)), launches=(0, 1),
                      window_msgs=32))
    rb.write()
    context = {"series": [{"bench": "bw", "size": 65536, "launch": k, "window_msgs": 32}
                          for k in (0, 1)]}
    table = ingest(rb.run_dir, {})
    return split_series(table), Run.from_context(context)


def _analyze(run, key, seed=1):
    groups, context = run
    bench, algo, size = key
    return analyze_series(groups[key], bench, size, context, seed=seed, rto=RTO)


def test_pingpong_with_retransmissions(run):
    r = _analyze(run, ("pingpong", "mpi", 8))
    json.dumps(r, allow_nan=False)
    assert (r["bench"], r["algo"], r["size"], r["unit"]) == ("pingpong", "mpi", 8, "s")
    assert r["seed"] == 1
    assert r["n"] == 798 and r["n_invalid"] == 2
    s = r["summary"]
    assert set(s) >= {"n", "min", "median", "mean", "p90", "p99", "max", "mad", "sd"}
    assert set(s["median"]) == {"point", "stderr", "level", "low", "high", "method"}
    assert s["median"]["point"] == pytest.approx(1 * MS, rel=0.02)
    # 5% of the samples are 200 ms late: far outliers, listed with their origin.
    o = r["outliers"]
    assert o["n_far"] == 40 and o["n_outlier"] + o["n_far"] >= 40
    assert len(o["listed"]) == 20 and all(x["label"] == "far" for x in o["listed"])
    assert all(x["rep"] % 20 == 7 and x["source"] == "0->1" for x in o["listed"])
    # ... a retransmission mode, of the right weight ...
    m = r["modes"]
    assert len(m["modes"]) == 2 and m["modes"][1]["rto_suspect"]
    assert m["modes"][1]["weight"] == pytest.approx(0.05, abs=0.01)
    assert m["rto"]["source"] == "test"
    # ... and one timeout in the RTO table.
    rows = r["tails"]["by_rto"]
    assert rows[0]["share"] == pytest.approx(0.95, abs=0.01)
    assert rows[1]["share"] == pytest.approx(0.05, abs=0.01)
    assert r["tails"]["on"] == "value" and len(r["tails"]["by_min"]) == 6
    assert r["ranks"] is None
    assert r["launches"]["n_launches"] == 2


def test_collective_has_ranks_and_launches(run):
    r = _analyze(run, ("allreduce", "mpi", 1024))
    json.dumps(r, allow_nan=False)
    assert r["ranks"]["last_order"] == [3] and r["ranks"]["n_reps"] == 100
    assert len(r["ranks"]["ranks"]) == 4
    # Both launches measured the same values: no between-launch variation.
    la = r["launches"]
    assert la["n_launches"] == 2 and la["between_sd"] == 0.0
    assert [x["n"] for x in la["launches"]] == [50, 50]


def test_bandwidth_tails_and_modes_are_on_durations(run):
    r = _analyze(run, ("bw", "mpi", 65536))
    assert r["unit"] == "B/s"
    assert r["summary"]["median"]["point"] == pytest.approx(1e9, rel=0.05)
    assert "time per repetition" in r["tails"]["on"] and "time" in r["modes"]["on"]
    # 32 messages of 64 KiB at ~1 GB/s: ~2.1 ms per repetition.
    assert r["modes"]["modes"][0]["location"] == pytest.approx(32 * 65536 / 1e9, rel=0.1)
    assert r["tails"]["by_min"][0]["low"] == pytest.approx(32 * 65536 / r["summary"]["max"])


def test_reproducible_with_seed(run):
    a = _analyze(run, ("pingpong", "mpi", 8), seed=4)
    assert a == _analyze(run, ("pingpong", "mpi", 8), seed=4)
    b = _analyze(run, ("pingpong", "mpi", 8), seed=5)
    assert a["summary"]["median"] != b["summary"]["median"]
    assert "seed 4" in a["summary"]["p99"]["method"]


def test_summary_matches_samples(run):
    groups, context = run
    rows = groups[("allreduce", "mpi", 1024)]
    s = series_samples(rows, "allreduce", 1024, "mpi", context)
    r = _analyze(run, ("allreduce", "mpi", 1024))
    assert r["summary"]["min"] == float(np.min(s.values))
    assert r["summary"]["median"]["point"] == float(np.median(s.values))


def test_empty_series(run):
    groups, context = run
    rows = groups[("allreduce", "mpi", 1024)].slice(0, 0)
    r = analyze_series(rows, "allreduce", 1024, context, rto=RTO)
    json.dumps(r, allow_nan=False)
    assert r["n"] == 0 and r["summary"]["median"]["point"] is None
    assert r["modes"]["modes"] == [] and r["tails"]["by_min"] == []


def test_plain():
    e = Estimate(1.0, float("nan"), 0.95, 0.5, float("inf"), "m")
    assert plain({"e": e, "a": np.array([1, 2]), "x": np.float32(2.5), "b": np.bool_(True),
                  (1, 2): [np.int64(3)]}) == {
        "e": {"point": 1.0, "stderr": None, "level": 0.95, "low": 0.5, "high": None,
              "method": "m"},
        "a": [1, 2], "x": 2.5, "b": True, "(1, 2)": [3]}


def test_rto_min_recorded_on_the_measured_hosts_is_the_default(run):
    groups, context = run
    recorded = {"rto_min_s": 0.005, "source": "read at run time on the measured hosts (smallest: h1)",
                "per_host": {"h0": {"rto_min_s": 0.2}, "h1": {"rto_min_s": 0.005}}}
    r = analyze_series(groups[("pingpong", "mpi", 8)], "pingpong", 8, Run.from_context({**context.context, "rto_min": recorded}))
    assert r["tails"]["rto_min_s"] == 0.005
    assert r["modes"]["rto"]["source"] == recorded["source"]
    # an explicit value still wins
    r = analyze_series(groups[("pingpong", "mpi", 8)], "pingpong", 8, Run.from_context({**context.context, "rto_min": recorded}), rto=RTO)
    assert r["tails"]["rto_min_s"] == 0.2
