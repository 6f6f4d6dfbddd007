# SPDX-License-Identifier: BSD-3-Clause
"""Every `--json` output carries `schema_version` and validates against its
JSON Schema under docs/schemas/ (draft 2020-12). The documents are real
outputs of the commands, on synthetic runs (no MPI); `run --json` is the
`show` document and is validated on every real run by tests/runcli.py."""

import json

import jsonschema
import numpy as np
import pytest

from mpiscope.cli.main import build_parser
from mpiscope.models.layers import layers_series
from mpiscope.models.loggp import loggp_series
from mpiscope.store.run import Run
from mpiscope.common.documents import SCHEMA_VERSIONS
from mpiscope.views.layers import layers_json
from mpiscope.views.loggp import loggp_json
from analysis_runs import build_collectives_run, build_run
from rawgen import build_demo_run
from schemas import SCHEMAS, json_of, schema, validate
from loggp_runs import noisy, samples_of, synthetic_run

US = 1e-6


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    build_demo_run(out)
    build_run(out, "20240301-000000-aaaa", "2024-03-01T00:00:00+00:00", sizes=[1, 64, 4096])
    build_run(out, "20240302-000000-bbbb", "2024-03-02T00:00:00+00:00", factor=1.2,
              sizes=[1, 64, 4096, 65536])
    build_collectives_run(out)  # for model check
    return out


# Every command with --json, and the document it prints.
JSON_COMMANDS = {"run": "show", "show": "show", "fit": "fit", "compare": "compare", "loggp": "loggp",
                 "layers": "layers", "model predict": "model-predict", "model check": "model-check",
                 "sim run": "sim-run", "sim predict": "sim-predict", "sim check": "sim-check",
                 "sim whatif": "sim-whatif",
                 "cluster up": "cluster-up", "cluster list": "cluster-list", "config show": "config-show",
                 "build": "build", "sbatch": "show", "transport probe": "transport-probe",
                 "transport advise": "transport-advise", "profile": "profile", "tune": "tune",
                 "app compare": "app", "methods": "methods", "history": "history"}


def _commands_with_json(parser, prefix=()):
    import argparse

    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands_with_json(sub, (*prefix, name))
        elif "--json" in action.option_strings:
            yield " ".join(prefix)


def test_every_json_option_prints_a_document_with_a_schema():
    assert set(_commands_with_json(build_parser())) == set(JSON_COMMANDS)
    assert set(JSON_COMMANDS.values()) == set(SCHEMA_VERSIONS)


def test_every_document_has_a_schema_file_with_its_version():
    files = {p.name.removesuffix(".schema.json") for p in SCHEMAS.glob("*.schema.json")}
    assert set(SCHEMA_VERSIONS) <= files
    for name, version in SCHEMA_VERSIONS.items():
        s = schema(name)
        jsonschema.Draft202012Validator.check_schema(s)
        assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert s["properties"]["schema_version"] == {"const": version}, name
        assert "schema_version" in s["required"], name


def test_show_and_export_json(out, capsys):
    for argv in (["show", "2024031", "--json"], ["export", "2024031", "--format", "json"]):
        doc = json_of([*argv, "--out", out], capsys)
        validate("show", doc)
        assert doc["run_id"] == "20240315-101500-a1b2" and doc["rows"]


def test_fit_and_compare(out, capsys):
    doc = json_of(["fit", "20240301", "--json", "--resamples", 50, "--out", out], capsys)
    validate("fit", doc)
    assert {f["bench"] for f in doc["fits"]} == {"pingpong", "bw", "allreduce"}
    doc = json_of(["compare", "20240301", "20240302", "--json", "--resamples", 50, "--out", out], capsys)
    validate("compare", doc)
    assert doc["only_b"] and doc["rows"]


def test_loggp_and_layers():
    series, run = synthetic_run()
    validate("loggp", json.loads(loggp_json(loggp_series(series, run, n_boot=50))))
    rng = np.random.default_rng(3)
    series, ctx = [], []
    for layer in ("mpi", "tcp", "shm"):
        for size in (8, 512, 4096, 32768):
            series.append(("layer_pingpong", layer, size, samples_of(noisy(rng, (1 + size * 1e-4) * US))))
            ctx.append({"bench": "layer_pingpong", "algo": layer, "size": size, "launch": 0})
    run = Run.from_context({"run_id": "layers", "series": ctx,
                            "ranks": {"0": {"0": {"host": "a"}, "1": {"host": "a"}}}})
    validate("layers", json.loads(layers_json(layers_series(series, run, n_boot=50))))


def test_model_predict_and_check(out, capsys):
    doc = json_of(["model", "predict", "--alpha", "2us", "--beta", "0.1ns/B", "-p", 8, "--bench",
                   "allreduce", "--size", "64K", "--crossover", "--json"], capsys)
    validate("model-predict", doc)
    assert doc["predictions"] and doc["crossovers"]
    doc = json_of(["model", "predict", "--alpha-s", "1us", "--beta-s", "0.1ns/B", "--alpha-r", "2us",
                   "--beta-r", "0.2ns/B", "-p", 4, "--bench", "bcast", "--size", "1K", "--json"], capsys)
    validate("model-predict", doc)
    doc = json_of(["model", "check", "20240303", "--json", "--out", out], capsys)
    validate("model-check", doc)
    assert {r["algo"] for r in doc["rows"]} == {"ring", "recursive_doubling"}


def test_a_document_of_another_version_or_shape_is_rejected(out, capsys):
    doc = json_of(["show", "2024031", "--json", "--out", out], capsys)
    with pytest.raises(jsonschema.ValidationError):
        validate("show", {**doc, "schema_version": 2})
    with pytest.raises(jsonschema.ValidationError):
        validate("show", {**doc, "rows": [{**doc["rows"][0], "median": "fast"}]})
