# SPDX-License-Identifier: BSD-3-Clause
"""Every value checked where it enters, whatever the door: an option, a
config file, a machine model, a weights file, a stored run or tune. NaN and
infinities, numbers out of range, digits sbatch does not read, a schema
version this mpiscope does not read: each refused with exit 2 and one line
naming the input (bad_inputs.refused_in_process), before anything is
queried, built, launched or written."""

import json

import pytest

from analysis_runs import build_run
from bad_inputs import refused_in_process, stored_runs
from mpiscope.app import checks as app_checks
from mpiscope.app.launch import compile_metric
from mpiscope.cli import types
from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.algorithm_catalog import Algorithm, Catalog
from mpiscope.store import checks

PREDICT = ["model", "predict", "--bench", "allreduce", "-p", "4", "--size", "8"]
TUNE = ["tune", "-n", "2", "--coll", "allreduce"]
RUN = ["run", "--bench", "pingpong", "--sizes", "8", "--dry-run"]
TWO_64 = str(2**64)


def _loggp(eel_point, version=1):
    estimate = {"point": eel_point, "stderr": None, "level": 0.95, "low": None, "high": None, "method": "x"}
    return json.dumps({"format": "mpiscope-machine-model", "schema_version": version,
                       "params": {"EEL": estimate, "G": {**estimate, "point": 1e-10}}, "base_size": 8}
                      ).replace('"@inf"', "1e999")


# Files a case names as @name (written into the case's directory).
FILES = {
    "alpha_nan": '{"alpha": NaN, "beta": "1ns/B"}',
    "alpha_inf": '{"alpha": 1e999, "beta": "1ns/B"}',
    "beta_text_inf": '{"alpha": "1us", "beta": "1e999ns/B"}',
    "segment_inf": '{"alpha": "1us", "beta": "1ns/B", "segment": 1e999}',
    "segment_huge": '{"alpha": "1us", "beta": "1ns/B", "segment": 18446744073709551616}',
    "loggp_inf": _loggp("@inf"),
    "loggp_version": _loggp(2e-6, version=999),
    "weights_nan": '{"collectives": {"allreduce": {"sizes": {"1024": NaN}}}}',
    "weights_inf": '{"collectives": {"allreduce": {"sizes": {"1024": 1e999}}}}',
    "weights_negative": '{"collectives": {"allreduce": {"sizes": {"1024": -3}}}}',
    "weights_size_inf": '{"collectives": {"allreduce": {"sizes": {"1e999": 3}}}}',
    "weights_version": '{"format": "mpiscope-profile-weights", "version": 999, "collectives": []}',
    "config_reps_max": f"[run]\nreps-max = {TWO_64}\n",
    "config_warmup": f"[run]\nwarmup = {TWO_64}\n",
    "config_time_budget": "[run]\ntime-budget = nan\n",
}

CASES = [
    # machine models: plain costs and LogGP models
    ("machine-alpha-nan", [*PREDICT, "--machine", "@alpha_nan"], ["alpha 'nan' is not a finite number"]),
    ("machine-alpha-inf", [*PREDICT, "--machine", "@alpha_inf"], ["alpha 'inf' is not a finite number"]),
    ("machine-beta-text-inf", [*PREDICT, "--machine", "@beta_text_inf"], ["'1e999ns/B' is not a finite number"]),
    ("machine-segment-inf", [*PREDICT, "--machine", "@segment_inf"], ["segment must be a number of bytes"]),
    ("machine-segment-huge", [*PREDICT, "--machine", "@segment_huge"], ["segment must be from 1 to"]),
    ("loggp-eel-inf", [*PREDICT, "--machine", "@loggp_inf"], ["is damaged", "'point' is inf"]),
    ("loggp-version", [*PREDICT, "--machine", "@loggp_version"], ["schema version 999", "it reads 1"]),
    # costs on the command line
    ("beta-bandwidth-overflow", [*PREDICT, "--alpha", "1us", "--beta", "1e309GB/s"],
     ["'1e309GB/s' is not a finite number"]),
    ("alpha-overflow", [*PREDICT, "--alpha", "1e999us", "--beta", "1ns/B"], ["'1e999us' is not a finite number"]),
    # weights: refused while the command line is read, before the MPI library is asked
    ("weights-nan", [*TUNE, "--weights", "@weights_nan"], ["negative, NaN or infinite"]),
    ("weights-inf", [*TUNE, "--weights", "@weights_inf"], ["negative, NaN or infinite"]),
    ("weights-negative", [*TUNE, "--weights", "@weights_negative"], ["negative, NaN or infinite"]),
    ("weights-size-inf", [*TUNE, "--weights", "@weights_size_inf"], ["not a weights file"]),
    ("weights-version", [*TUNE, "--weights", "@weights_version"], ["weights version 999", "it reads 1"]),
    # digits a program downstream reads
    ("sbatch-time-arabic", ["sbatch", "--bench", "pingpong", "--time", "١٢:٠٠:٠٠"], ["is not a time limit"]),
    ("sbatch-time-fullwidth", ["sbatch", "--bench", "pingpong", "--time", "１２"], ["is not a time limit"]),
    # ranges, alike on the command line and in a config file
    ("reps-max-option", [*RUN, "--reps-max", TWO_64], ["--reps-max", f"must be at most {types.MAX_REPS}"]),
    ("reps-max-config", [*RUN, "@MPISCOPE_CONFIG=@config_reps_max"],
     ["'run.reps-max'", f"must be at most {types.MAX_REPS}"]),
    ("warmup-config", [*RUN, "@MPISCOPE_CONFIG=@config_warmup"], ["'run.warmup'", "must be at most"]),
    ("time-budget-config-nan", [*RUN, "@MPISCOPE_CONFIG=@config_time_budget"], ["'run.time-budget'"]),
    ("count-beyond-int", ["fit", "--min-points", TWO_64, "--out", "{root}"],
     ["--min-points", f"must be at most {types.MAX_COUNT}"]),
]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return stored_runs(tmp_path_factory.mktemp("root") / "runs")


def _named(argv, place):
    return [w.replace("@MPISCOPE", "\0").replace("@", f"{place}/").replace("\0", "@MPISCOPE")
            if "@" in w else w for w in argv]


@pytest.mark.parametrize("argv, needles", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_value_out_of_its_range_is_refused(argv, needles, tmp_path, root, monkeypatch, capsys):
    place = tmp_path / "files"
    place.mkdir()
    for name, text in FILES.items():
        (place / name).write_text(text)
    refused_in_process(_named(argv, place), needles, tmp_path, root, monkeypatch, capsys)


def test_the_table_names_each_case_once():
    assert len({c[0] for c in CASES}) == len(CASES)
    used = {w.split("@")[-1] for c in CASES for w in c[1] if "@" in w}
    assert used == set(FILES)


@pytest.mark.parametrize("slots", ["٢", "２", "²"])
def test_a_hostfile_slot_count_in_other_digits_is_refused(slots):
    from mpiscope.common import hostfiles

    assert hostfiles.parse("node0 slots=2\n") == [("node0", 2)]
    with pytest.raises(UsageError, match="hosts:1: the slot count .* must be a positive integer"):
        hostfiles.parse(f"node0 slots={slots}\n", "hosts")


# ---------------------------------------------------------------- stored runs and tunes

def _stored(tmp_path, **context):
    run = build_run(tmp_path / "runs", "20240101-000000-aaaa", "2024-01-01T00:00:00+00:00",
                    benches=("pingpong",), sizes=[8, 64])
    cj = run / "context.json"
    cj.write_text(json.dumps({**json.loads(cj.read_text()), **context}))
    return run


@pytest.mark.parametrize("command", [["show", "RUN"], ["export", "RUN", "--format", "csv"]])
def test_a_context_of_another_schema_version_is_refused_with_both_numbers(command, tmp_path, monkeypatch,
                                                                          capsys):
    from mpiscope.cli.main import main

    run = _stored(tmp_path, schema_version=999)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("MPISCOPE_CONFIG", raising=False)
    assert main([w.replace("RUN", str(run)) for w in command] + ["--out", str(run.parent)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "context.json" in err[0] and "schema version 999" in err[0] and "reads 1" in err[0]


@pytest.mark.parametrize("key, value", [("np", float("nan")), ("np", 0), ("launches", 2.5), ("seed", -1),
                                        ("schema_version", "1"), ("rto_min", {"rto_min_s": float("nan")}),
                                        ("rto_min", {"rto_min_s": None}), ("rto_min", 0.2)])
def test_a_context_value_out_of_range_is_refused(key, value, tmp_path):
    assert checks.context({"kind": "measurement", "np": 2, "rto_min": {"rto_min_s": 0.2}}, "c")["np"] == 2
    with pytest.raises(UsageError, match=f"'{key}'|schema version"):
        checks.context({"kind": "measurement", key: value}, tmp_path / "context.json")


def test_non_finite_finds_the_first_nan_or_infinity_and_where():
    assert checks.non_finite({"a": [1, 2.5, {"b": None}], "c": "nan"}) is None
    assert checks.non_finite({"a": [1, {"b": float("inf")}]}) == "a.1.b"
    assert checks.non_finite([0.0, float("nan")]) == "1"
    with pytest.raises(UsageError, match=r"x\.0 is -inf"):
        checks.finite({"x": [float("-inf")]}, "tune.json")


def test_a_tune_result_of_another_version_or_with_nan_is_refused(tmp_path):
    from mpiscope.tune.result_file import read

    path = tmp_path / "tune.json"
    path.write_text('{"schema_version": 999, "p": 2}')
    with pytest.raises(UsageError, match="tune result schema version 999.*reads 1"):
        read(path)
    path.write_text('{"schema_version": 1, "p": 2, "verification": {"speedup": NaN}}')
    with pytest.raises(UsageError, match="verification.speedup is nan"):
        read(path)
    path.write_text('{"schema_version": 1, "p": 2, "verification": {"speedup": null}}')
    assert read(path)["p"] == 2


APP_CONTEXT = {"configs": [{"name": "default"}, {"name": "eager"}], "baseline": "default",
               "options": {"noise": 0.02, "alpha": 0.05, "level": 0.95, "seed": 1, "n_boot": 200, "warmup": 1}}


@pytest.mark.parametrize("change, words", [
    ({"configs": None}, "lists no configurations"),
    ({"baseline": "other"}, "baseline 'other'"),
    ({"options": {**APP_CONTEXT["options"], "alpha": float("nan")}}, "options.alpha is nan"),
    ({"options": {**APP_CONTEXT["options"], "n_boot": 0}}, "options.n_boot is 0"),
    ({"options": {**APP_CONTEXT["options"], "level": 1.5}}, "options.level is 1.5"),
])
def test_an_app_context_out_of_range_is_refused(change, words, tmp_path):
    assert app_checks.context(APP_CONTEXT, tmp_path / "context.json") is APP_CONTEXT
    with pytest.raises(UsageError, match=words):
        app_checks.context({**APP_CONTEXT, **change}, tmp_path / "context.json")


RESULT = {"config": "eager", "n": 3, "median": 1.8, "speedup": {"point": 1.1, "low": 1.0, "high": 1.2},
          "p_value": 0.04, "launches": 4, "failed": 1, "metric_missing": 0}


@pytest.mark.parametrize("change, words", [
    ({"n": float("nan")}, "n = nan"), ({"launches": -1}, "launches = -1"),
    ({"median": float("inf")}, "median of inf"), ({"median": -1.0}, "median of -1.0"),
    ({"p_value": 2.0}, "p-value of 2.0"), ({"speedup": {"point": 0.0}}, "no positive number"),
    ({"speedup": {"point": 1.1, "low": float("nan")}}, "no positive number"),
])
def test_an_app_answer_out_of_range_is_refused_with_what_to_do(change, words, tmp_path):
    doc = {"schema_version": 1, "rounds": 4, "launches": 8, "results": [RESULT]}
    assert app_checks.answer(doc, tmp_path / "app.json") is doc
    with pytest.raises(UsageError, match=words) as refused:
        app_checks.answer({**doc, "results": [{**RESULT, **change}]}, tmp_path / "app.json")
    assert "app.json is damaged: results.0" in str(refused.value) and "launches.parquet" in str(refused.value)


# ---------------------------------------------------------------- --metric and --skip

def test_a_metric_too_deep_to_compile_is_refused_cleanly():
    with pytest.raises(UsageError, match="nests too deeply"):
        compile_metric("(" * 5000 + "a" + ")" * 5000)
    assert compile_metric("time ([0-9.]+)").groups == 1


def test_skip_names_what_the_library_offers():
    from mpiscope.cli.tune import _check_skip

    catalog = Catalog("openmpi", "4.1.4", {"allreduce": [Algorithm("ring", "4"), Algorithm("rabenseifner", "6")],
                                           "bcast": [Algorithm("binomial", "6")]}, "test")
    _check_skip(("ring", "binomial"), catalog, ["allreduce", "bcast"])
    with pytest.raises(UsageError, match="'rign' is no algorithm or preset openmpi 4.1.4 offers for allreduce; "
                                         "valid names: rabenseifner, ring"):
        _check_skip(("rign",), catalog, ["allreduce"])


def test_a_time_no_timer_reads_is_refused(tmp_path):
    import pyarrow as pa

    table = pa.table({"t_start": [1.0, float("nan")], "t_end": [2.0, 3.0]})
    assert checks.timer_reads(table, ("t_start", "t_end"), "s.parquet", "the samples file", "fix") is table
    for bad in (float("inf"), -1e300, 2 * checks.MAX_TIMER_S):
        damaged = pa.table({"t_start": [1.0, bad], "t_end": [2.0, 3.0]})
        with pytest.raises(UsageError, match="the samples file s.parquet is damaged: t_start holds .* s, a time no "
                                             "timer reads; fix"):
            checks.timer_reads(damaged, ("t_start", "t_end"), "s.parquet", "the samples file", "fix")
