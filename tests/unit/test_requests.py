# SPDX-License-Identifier: BSD-3-Clause
"""The typed requests between the command line and measure/ (measure/request.py,
cli/run_options.py): every run option reaches a request field, the parser's
defaults are the request's, and a request cannot be changed once made."""

import dataclasses
import math

import pytest

from mpiscope.cli.main import build_parser
from mpiscope.cli.run_options import measure_request
from mpiscope.measure.request import LaunchRequest, MeasureRequest

# Options of the command itself, not of what it measures.
COMMAND_ONLY = {"dry_run", "json", "func", "command", "help"}


def _run_parser():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return sub.choices["run"]


def _fields(cls):
    return {f.name for f in dataclasses.fields(cls)}


def test_every_run_option_is_a_request_field_and_back():
    dests = {a.dest for a in _run_parser()._actions} - COMMAND_ONLY
    fields = (_fields(MeasureRequest) | _fields(LaunchRequest)) - {"launch", "installation"}
    assert dests == fields


def test_the_parser_s_defaults_are_the_request_s(monkeypatch):
    monkeypatch.delenv("MPISCOPE_OUT", raising=False)
    request = measure_request(build_parser().parse_args(["run"]))
    # --launcher says mpirun where the request leaves it unsaid (None: mpirun)
    assert request == dataclasses.replace(MeasureRequest(), launch=LaunchRequest(launcher="mpirun"))


def test_given_options_reach_their_fields():
    request = measure_request(build_parser().parse_args(
        ["run", "-n", "3", "--mpi", "mpich", "--ppn", "3", "--bench", "pingpong", "--sizes", "8,1K",
         "--reps-max", "40", "--algo", "ring", "--launcher-args", "--mca btl self"]))
    assert (request.launch.np, request.launch.mpi, request.launch.ppn) == (3, "mpich", 3)
    assert request.launch.launcher_args == "--mca btl self"
    assert (request.bench, request.sizes, request.reps_max, request.algo) == ("pingpong", "8,1K", 40, "ring")


def test_requests_are_immutable():
    request = MeasureRequest()
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.bench = "pingpong"
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.launch.np = 4


def test_a_stored_plan_keeps_the_field_names_of_stored_runs(tmp_path):
    from mpiscope.measure.plan import Plan

    plan = Plan(np=2, launcher_family="mpich", launcher="mpirun", benches=["pingpong"], sizes=[8],
                sync="auto", timer="tsc", cache="warm", reps_min=1, reps_max=2, ci_width=0.02,
                time_budget=1.0, launches=1, check=False, seed=1, out=tmp_path)
    stored = plan.stored()
    assert stored["mpi"] == "mpich" and "launcher_family" not in stored
    assert stored["out"] == str(tmp_path)
    assert list(stored)[:2] == ["np", "mpi"]   # in the Plan's order, as before


def _subparsers(parser):
    for action in parser._actions:
        for sub in (getattr(action, "choices", None) or {}).values() if action.nargs == "A..." else ():
            yield sub
            yield from _subparsers(sub)


def test_every_command_taking_mpi_offers_the_registry_s_libraries():
    from mpiscope import mpilibs

    keys = tuple(lib.key for lib in mpilibs.with_debian_wrapper())
    offered = {tuple(a.choices) for p in _subparsers(build_parser()) for a in p._actions
               if "--mpi" in a.option_strings and a.choices}
    assert offered == {keys}


def test_an_identified_installation_is_used_as_is():
    from mpiscope.common.errors import UsageError
    from mpiscope.engine.mpi import Installation

    found = Installation("/x/mpicc", "gcc", "open-mpi", "5.0.3", "3.1", "Open MPI v5.0.3", None)
    assert LaunchRequest(installation=found, mpi="no-such-mpi").find_installation() is found
    with pytest.raises(UsageError, match="--mpi must be one of"):
        LaunchRequest(mpi="no-such-mpi").find_installation()   # looked up: refused


# `mpiscope tune`: its options that configure the launches (the run plan, cli/tune.py: _plan)
# or the command itself, and those named otherwise in TuneConfig.
TUNE_PLAN_OR_COMMAND = {"np", "mpi", "mpicc", "ppn", "hostfile", "cluster", "launcher_args", "time_budget",
                        "reps_max", "ci_width", "own", "output", "out", "json", "func", "command", "help"}
TUNE_RENAMED = {"coll": "collectives", "exhaustive": "adaptive", "from_run": "sim_costs"}


def _tune_parser():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return sub.choices["tune"]


def test_every_tune_option_is_a_tune_config_field_or_the_plan_s():
    from mpiscope.tune.tuner import TuneConfig

    dests = {a.dest for a in _tune_parser()._actions} - TUNE_PLAN_OR_COMMAND
    assert {TUNE_RENAMED.get(d, d) for d in dests} <= _fields(TuneConfig)
    assert "search" in dests


def test_the_search_and_its_costs_reach_the_tune_config(tmp_path):
    from mpiscope.cli.tune import _config

    machine = tmp_path / "machine.json"
    machine.write_text('{"alpha": "2us", "beta": "1ns/B"}')
    parse = build_parser().parse_args
    cfg = _config(parse(["tune", "--search", "guided", "--machine", str(machine)]))
    assert (cfg.search, cfg.adaptive) == ("guided", True)
    assert math.isclose(cfg.sim_costs.alpha_s, 2e-6) and math.isclose(cfg.sim_costs.beta_s, 1e-9)
    plain = _config(parse(["tune"]))
    assert (plain.search, plain.adaptive, plain.sim_costs) == ("guided", True, None)  # costs measured by the tune
    adaptive = _config(parse(["tune", "--search", "adaptive"]))
    assert (adaptive.search, adaptive.sim_costs) == ("adaptive", None)
    assert _config(parse(["tune", "--exhaustive"])).adaptive is False
    with pytest.raises(dataclasses.FrozenInstanceError):
        plain.search = "guided"
