# SPDX-License-Identifier: BSD-3-Clause
"""LogGP and layer analysis on synthetic series with known parameters (no MPI):
overheads from the CPU overlap test, g and G from the flood, L and the
overlapping-overheads flag, layer shares, the machine model file, options."""

import json

import numpy as np
import pytest

from mpiscope.measure import benchmarks

from mpiscope.measure import loggp_options

from mpiscope.models import machine_model
from mpiscope.common.errors import UsageError
from mpiscope.models.layers import layers_series
from mpiscope.views.layers import format_layers
from mpiscope.models.loggp import loggp_series
from mpiscope.views.loggp import format_loggp, loggp_json
from mpiscope.store.samples import derive
from mpiscope.store.run import Run
from loggp_runs import NS, US, noisy, samples_of, synthetic_run

def test_known_parameters_are_recovered():
    series, ctx = synthetic_run()
    r = loggp_series(series, ctx, seed=2, n_boot=400)
    p = r.params
    assert r.base_size == 8
    assert p["EEL"].point == pytest.approx(2.0 * US + 0.8 * NS, rel=0.02)
    assert p["o_s"].point == pytest.approx(0.3 * US, rel=0.05)
    assert p["o_r"].point == pytest.approx(0.2 * US, rel=0.05)
    assert p["g"].point == pytest.approx(1.0 * US, rel=0.02)
    assert p["G"].point == pytest.approx(0.1 * NS, rel=0.03)
    assert p["g_over_G"].point == pytest.approx(10000, rel=0.05)
    assert p["L"].point == pytest.approx(2.0 * US - 0.5 * US, rel=0.03)
    assert p["overlap"].point == p["L"].point
    for name in ("EEL", "o_s", "o_r", "g", "G", "L", "g_over_G"):
        assert p[name].low <= p[name].point <= p[name].high, name
    assert not r.flags
    # the queue depth that gives the least gap is found at every size
    assert all(q != 1 for q in r.best_q.values())
    # o at every size, and Bell et al.'s knee bounds bracket the true value at 8 B
    o8 = r.overheads["send"][0]
    assert o8.size == 8 and o8.knee is not None
    assert o8.knee[0] - 0.05 * US <= 0.3 * US <= o8.knee[1] + 0.05 * US
    assert [o.size for o in r.overheads["receive"]] == [8, 1024, 65536, 1048576]
    text = format_loggp(r)
    assert "o_s" in text and "gap g(m, q)" in text and "FLAG" not in text
    doc = json.loads(loggp_json(r))
    assert doc["params"]["o_s"]["point"] == pytest.approx(p["o_s"].point)
    assert doc["units"]["G"] == "s/B"


def test_overheads_larger_than_eel_are_flagged_and_leave_L_undefined():
    series, ctx = synthetic_run(eel=0.4 * US, o_s=0.3 * US, o_r=0.25 * US, g=0.5 * US)
    r = loggp_series(series, ctx, seed=2, n_boot=300)
    assert r.params["L"] is None
    assert r.params["overlap"].point < 0
    assert any("overlapping overheads" in f for f in r.flags)
    assert "FLAG: overlapping overheads" in format_loggp(r)


def test_a_run_without_loggp_benchmarks_is_refused():
    with pytest.raises(UsageError, match="LogGP"):
        loggp_series([("pingpong", "mpi", 8, samples_of([1e-6, 2e-6]))],
                     Run.from_context({"run_id": "x", "series": []}))


def test_steps_that_never_reach_the_knee_give_a_bound_with_a_note():
    rng = np.random.default_rng(1)
    series, ctx_series = [], []
    for f in (0.0, 0.1, 0.2):
        series.append(("overhead", f"os+{f:g}g", 8, samples_of(noisy(rng, max(1e-6, 0.3e-6 + f * 1e-6)))))
        ctx_series.append({"bench": "overhead", "algo": f"os+{f:g}g", "size": 8, "launch": 0,
                           "params": {"compute_s": f * 1e-6}})
    r = loggp_series(series, Run.from_context({"run_id": "x", "series": ctx_series}), n_boot=200)
    o = r.overheads["send"][0]
    assert o.value is not None and o.value.point >= 0.3e-6
    assert "upper bound" in o.note


def test_layer_shares_and_fits():
    rng = np.random.default_rng(3)
    sizes = [8, 64, 512, 4096, 32768, 262144]
    series, ctx_series = [], []
    for layer, alpha, beta in (("mpi", 2.0, 0.2), ("tcp", 1.5, 0.15), ("shm", 0.5, 0.1)):
        for size in sizes:
            series.append(("layer_pingpong", layer, size,
                           samples_of(noisy(rng, (alpha + beta * 1e-3 * size) * US))))
            ctx_series.append({"bench": "layer_pingpong", "algo": layer, "size": size, "launch": 0})
    ctx = {"run_id": "layers", "series": ctx_series,
           "ranks": {"0": {"0": {"host": "a"}, "1": {"host": "a"}}}}
    r = layers_series(series, Run.from_context(ctx), n_boot=300)
    assert r.transport == "shm"
    share = r.shares[("layer_pingpong", "tcp")][8]
    assert share.point == pytest.approx(1.5 / 2.0, rel=0.03) and share.low < share.point < share.high
    fit = r.curves[("layer_pingpong", "shm")].fit
    assert fit.n_segments == 1
    assert fit.segments[0].alpha.point == pytest.approx(0.5 * US, rel=0.05)
    assert fit.segments[0].beta.point == pytest.approx(0.1 * NS, rel=0.05)
    text = format_layers(r)
    assert "tcp/mpi" in text and "75%" in text


def test_skipped_layer_reason_is_shown():
    ctx = {"run_id": "x", "series": [
        {"bench": "layer_pingpong", "algo": "mpi", "size": 8, "launch": 0},
        {"bench": "layer_pingpong", "algo": "shm", "size": 8, "launch": 0,
         "params": {"skipped": "rank 0: ranks on different hosts (h0, h1) share no memory"}}]}
    r = layers_series([("layer_pingpong", "mpi", 8, samples_of([1e-6] * 5))], Run.from_context(ctx),
                      n_boot=50)
    assert "shm: skipped (rank 0: ranks on different hosts" in format_layers(r)


# ---------------------------------------------------------------- machine model

def test_machine_model_round_trips_with_its_schema_version(tmp_path):
    series, ctx = synthetic_run()
    model = machine_model.from_loggp(loggp_series(series, ctx, n_boot=200))
    path = machine_model.save(model, tmp_path / "machine.json")
    doc = json.loads(path.read_text())
    assert doc["format"] == "mpiscope-machine-model"
    assert doc["schema_version"] == machine_model.SCHEMA_VERSION == 1
    loaded = machine_model.load(path)
    assert loaded.schema_version == 1
    assert loaded.to_json() == path.read_text()
    for name in ("EEL", "o_s", "o_r", "g", "G", "L", "g_over_G"):
        assert loaded.params[name] == model.params[name], name
    assert loaded.param("G") == pytest.approx(0.1 * NS, rel=0.03)
    assert loaded.tables["g"]["q64"][0][0] == 8
    # never overwritten; unknown versions and other files are refused
    with pytest.raises(UsageError, match="never overwritten"):
        machine_model.save(model, path)
    doc["schema_version"] = 99
    (tmp_path / "future.json").write_text(json.dumps(doc))
    with pytest.raises(UsageError, match="schema version 99"):
        machine_model.load(tmp_path / "future.json")
    (tmp_path / "other.json").write_text("{}")
    with pytest.raises(UsageError, match="not an mpiscope machine model"):
        machine_model.load(tmp_path / "other.json")


# ---------------------------------------------------------------- samples and options

def _cols(role_dur):
    """Rows of one repetition: {role: local duration} for ranks 0 (initiator), 1."""
    roles = list(role_dur)
    n = len(roles)
    return {"launch": np.zeros(n, dtype=np.int32), "rep": np.zeros(n, dtype=np.int32),
            "rank": np.arange(n, dtype=np.int32), "role": np.array(roles, dtype=object),
            "peer": np.array([1, 0], dtype=np.int32), "t_start_local": np.zeros(n),
            "t_end_local": np.array([role_dur[r] for r in roles]), "t_start": np.zeros(n),
            "t_end": np.zeros(n), "t_sched": np.full(n, np.nan), "valid": np.ones(n, dtype=bool)}


def test_samples_are_times_per_message_on_the_measured_side():
    cols = _cols({"initiator": 256e-6, "responder": 128e-6})
    assert derive("per_message", 8, cols, {0: 256}).values[0] == pytest.approx(1e-6)
    # the receive-overhead test is timed on rank 1, the responder
    s = derive("per_message", 8, cols, {0: 256}, timed_role="responder")
    assert s.values[0] == pytest.approx(0.5e-6) and s.source[0] == "1->0"
    assert derive("half_round_trip", 8, cols, {0: 64}).values[0] == pytest.approx(128e-6)


def test_an_unknown_rule_is_refused_not_guessed():
    with pytest.raises(UsageError, match="unknown sample rule 'median_of_thirds'"):
        derive("median_of_thirds", 8, _cols({"initiator": 1e-6, "responder": 1e-6}), {0: 64})


def test_options_parse_and_count_variants():
    assert loggp_options.parse_queue_depths("1,4,64") == [1, 4, 64]
    assert loggp_options.parse_overhead_steps("0,0.5,2") == [0.0, 0.5, 2.0]
    for bad in ("0", "1,x", "", "2,2"):
        with pytest.raises(UsageError):
            loggp_options.parse_queue_depths(bad)
    with pytest.raises(UsageError):
        loggp_options.parse_overhead_steps("-1")

    class P:
        queue_depths, overhead_steps, flood_bytes = [1, 8], None, 1 << 20
    counts = loggp_options.variant_counts(P)
    assert counts["flood"] == 2 and counts["overhead"] == 12 and counts["layer_bw"] == 3
    assert benchmarks.series_count(["flood", "overhead", "oneway"], [8, 1024], (), counts) == 4 + 24 + 2
    assert loggp_options.engine_args(P) == ["--queue-depths", "1,8", "--flood-bytes", "1048576"]
    assert "flood" not in benchmarks.SUITES["full"]["bench"]
    assert "overhead" in benchmarks.SUITES["loggp"]["bench"]


# ---------------------------------------------------------------- too little data

def test_parameters_count_their_samples_and_one_sample_is_insufficient():
    series, ctx = synthetic_run()
    r = loggp_series(series, ctx, n_boot=100)
    assert r.samples["EEL"] == 41 and r.samples["G"] == 41 and r.samples["L"] == 41
    assert r.insufficient() == {} and not any("insufficient" in f for f in r.flags)
    # EEL measured once (the finding: 25.5 us from one sample, CI [25.48, 25.48]).
    series = [(b, a, s, samples_of(smp.values[:1]) if (b, s) == ("oneway", 8) else smp)
              for b, a, s, smp in series]
    r = loggp_series(series, ctx, n_boot=100)
    assert r.samples["EEL"] == 1 and r.samples["L"] == 1 and r.samples["o_s"] == 41
    assert r.insufficient() == {"EEL": 1}
    assert any(f.startswith("insufficient data: EEL rests on series of as few as 1 valid sample ")
               for f in r.flags)
    assert json.loads(loggp_json(r))["samples"]["EEL"] == 1
    row = next(l for l in format_loggp(r).splitlines() if l.split()[:1] == ["EEL"])
    assert row.split()[5] == "1"          # the n column, after "[low, high]"


def test_layer_slower_than_mpi_is_a_marked_ratio_not_a_share():
    rng = np.random.default_rng(4)
    series = [("layer_pingpong", layer, 8, samples_of(noisy(rng, t * US)))
              for layer, t in (("mpi", 0.5), ("tcp", 28.1), ("shm", 0.3))]
    ctx = {"run_id": "layers", "series": [{"bench": b, "algo": a, "size": s, "launch": 0}
                                          for b, a, s, _ in series]}
    r = layers_series(series, Run.from_context(ctx), n_boot=100)
    text = format_layers(r)
    row = next(l.split() for l in text.splitlines() if l.split()[:1] == ["8"])
    assert row[3].endswith("×") and float(row[3][:-1]) == pytest.approx(56.2, rel=0.01)
    assert row[5] == "60%"
    assert "×: the layer takes longer than MPI there" in text
    assert "insufficient" not in text
    short = [(b, a, s, samples_of(smp.values[:2]) if a == "tcp" else smp) for b, a, s, smp in series]
    assert "  tcp: insufficient data at 8 B: fewer than 6 valid samples" in \
        format_layers(layers_series(short, Run.from_context(ctx), n_boot=100))
    # No cell shows a percentage above 100.
    assert not [c for l in text.splitlines() for c in l.split()
                if c.endswith("%") and c[:-1].isdigit() and int(c[:-1]) > 100]
