# SPDX-License-Identifier: BSD-3-Clause
"""Everything the Python side offers is covered by what the engine says of
itself (`mpiscope-engine --describe`): suites, CLI choices, export titles,
sample derivation, the collective algorithms the cost models know."""

import json

import pytest

from mpiscope.cli.main import build_parser
from mpiscope.engine.build import ensure_engine
from mpiscope.engine.describe import CACHE_NAME, describe, describe_engine
from mpiscope.measure.benchmarks import SUITES
from mpiscope.models.costmodels import ALGORITHMS
from mpiscope.store import schema1
from mpiscope.store.samples import RULES, unit_of
from mpiscope.views.osu import OSU_PROGRAMS


@pytest.fixture(scope="module")
def known():
    return describe("openmpi")


def test_both_builds_describe_the_same_benchmarks(known):
    assert describe("mpich") == known


def test_suites_name_only_benchmarks_the_engine_has(known):
    for name, suite in SUITES.items():
        missing = set(suite["bench"]) - set(known.benchmarks)
        assert not missing, (name, missing)


def test_derivation_covers_every_rule_and_units_follow_the_rule(known):
    assert set(known.rules) == RULES
    for b in known.benchmarks.values():
        assert b.rule in RULES and b.unit == unit_of(b.rule), b
        # summarized as one operation over all ranks exactly when the rule says so
        assert b.collective == (b.rule == "slowest_rank"), b


def test_schema1_runs_read_with_the_rules_the_engine_applies(known):
    # store/schema1.py holds the rules of schema-1 files, which name no rule per
    # series; the engine applies the same ones (benchmarks schema 1 does not name,
    # such as the transport lab's tp_*, cannot occur in a schema-1 file: those that
    # schema 1 names, and every collective, are checked)
    for b in known.benchmarks.values():
        if b.name in schema1._RULES or b.collective:
            assert schema1.rule(b.name) == b.rule, b.name


def test_export_titles_and_cost_models_name_what_the_engine_measures(known):
    assert set(OSU_PROGRAMS) <= set(known.benchmarks)
    for coll, algos in ALGORITHMS.items():
        assert coll in known.algorithms, coll
        assert set(algos) <= set(known.algorithms[coll]), (coll, set(algos) - set(known.algorithms[coll]))


def test_cli_choices_exist(known):
    run = build_parser(command="run")
    suite = next(a for a in run._subparsers._group_actions[0].choices["run"]._actions
                 if a.dest == "suite")
    assert set(suite.choices) == set(SUITES)


def test_the_description_is_cached_beside_the_engine_and_renewed_with_it(tmp_path, known):
    engine = ensure_engine("openmpi")
    cache = engine.with_name(CACHE_NAME)
    assert json.loads(cache.read_text())["describe"]["raw_schema_version"] == known.raw_schema_version
    # a cache made from another build is not trusted
    doc = json.loads(cache.read_text())
    doc["key"]["mtime_ns"] -= 1
    doc["describe"]["benchmarks"] = []
    cache.write_text(json.dumps(doc))
    assert describe_engine(engine) == known
    assert json.loads(cache.read_text())["describe"]["benchmarks"]
