# SPDX-License-Identifier: BSD-3-Clause
"""The requests tune and transport build for measure/ make the plan `mpiscope
run` makes from the same options, and a notebook's request runs as the
command does (mpiscope.api.run)."""

import dataclasses
from types import SimpleNamespace

import mpiscope
from mpiscope.cli import transport, tune
from mpiscope.cli.main import build_parser
from mpiscope.cli.run_options import measure_request
from mpiscope.engine.mpi import find_mpi
from mpiscope.measure.plan import make_plan


def _run_plan(*argv):
    return make_plan(measure_request(build_parser().parse_args(["run", *map(str, argv)])))


def test_tune_s_plans_are_run_s_from_the_same_options(tmp_path):
    args = build_parser().parse_args(["tune", "-n", "2", "--time-budget", "0.1", "--reps-max", "50",
                                      "--ci-width", "0.05", "--seed", "7", "--sizes", "8,1K"])
    mpi = find_mpi(mpicc=args.mpicc, mpi=args.mpi)
    same = ("--time-budget", 0.1, "--sync", "barrier", "--start-barrier", "own", "--reps-max", 50,
            "--ci-width", 0.05, "--seed", 7, "-n", 2, "--mpicc", mpi.wrapper, "--out", tmp_path)
    assert tune._plan(args, tmp_path, mpi, np=2) == _run_plan("--bench", "allreduce", *same)
    own = tune._plan(args, tmp_path, mpi, ["allreduce", "bcast"], 2)
    assert own == _run_plan("--bench", "allreduce,bcast", "--algo", "all", "--sizes", "8,1K", *same)
    assert own.algo_variants["bcast"][0] == "mpi" and len(own.algo_variants["bcast"]) > 1


def test_transport_s_verification_plan_is_the_command_it_records(tmp_path):
    mpi = find_mpi()
    lab_run = SimpleNamespace(plan={"mpicc": mpi.wrapper}, mpi=mpi.launcher_family)
    args = SimpleNamespace(verify_sizes="1K,4K", time_budget=0.2, out=str(tmp_path))
    request = transport._verification_request(lab_run, ["-x", "UCX_TLS"], "lab-advised-1", args)
    recorded = transport._recorded_command(request)
    assert recorded[:4] == ["mpiscope", "transport", "advise", "--verify"]
    assert make_plan(request) == _run_plan(*recorded[4:])
    assert make_plan(request).launcher_args == ["-x", "UCX_TLS"]


def test_a_notebook_s_request_runs_as_the_command_does(tmp_path):
    request = mpiscope.MeasureRequest(launch=mpiscope.LaunchRequest(np=2), bench="pingpong",
                                      sizes="8,1K", reps_max=30, time_budget=0.2, out=str(tmp_path))
    run = mpiscope.run(request)
    assert run.status == "completed"
    summary = run.summary()
    assert sorted(summary["size"]) == [8, 1024] and set(summary["bench"]) == {"pingpong"}
    stored = dataclasses.asdict(make_plan(request))
    assert run.context["plan"]["benches"] == stored["benches"] == ["pingpong"]
    assert run.context["plan"]["reps_max"] == 30
