# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope run --algo/--segment/--trace`: validation, plan and progress
total (no MPI), and `mpiscope model check` on a real run."""

import json

import pytest

from mpiscope.cli.main import build_parser
from mpiscope.engine.describe import describe
from mpiscope.measure import algo_options, benchmarks
from mpiscope.cli.run_options import measure_request
from mpiscope.measure.plan import make_plan
from runcli import mpiscope, run_ok


def _plan(*argv):
    args = build_parser().parse_args(["run", *argv])
    return make_plan(measure_request(args))


def test_algo_names_become_engine_variants():
    plan = _plan("-n", "4", "--bench", "allgather,bcast,pingpong", "--algo", "mpi,all",
                 "--sizes", "8,1K", "--segment", "4K", "--trace")
    args = plan.engine_args(0, "/tmp/x")
    assert args[args.index("--algo") + 1] == "mpi,all"
    assert args[args.index("--segment") + 1] == "4096"
    assert "--trace" in args
    # progress total: 9 allgather variants, 6 bcast variants, pingpong once, at 2 sizes
    assert plan.series_count() == 2 * (9 + 6 + 1)
    algorithms = describe("openmpi").algorithms
    assert algo_options.resolve("bcast", ["binomial", "mpi", "binomial"], algorithms) == ["binomial", "mpi"]
    assert algo_options.resolve("gather", ["all"], algorithms) == ["mpi"]
    # a name applies to the collectives that have it; the others run the library's own
    plan = _plan("-n", "2", "--bench", "allgather,bcast", "--algo", "bruck", "--sizes", "8")
    assert plan.series_count() == 2
    assert algo_options.resolve("bcast", ["bruck"], algorithms) == ["mpi"]


def test_without_algo_nothing_changes():
    plan = _plan("-n", "2", "--bench", "allreduce", "--sizes", "8")
    assert "--algo" not in plan.engine_args(0, "/tmp/x")
    assert plan.series_count() == benchmarks.series_count(["allreduce"], [8])


@pytest.mark.parametrize("argv, message", [
    (("--bench", "bcast", "--algo", "ring"),
     "--algo ring: no benchmark asked for has an algorithm 'ring'; valid: mpi, all, or for bcast: "
     "binomial, scatter_allgather_recursive_doubling, scatter_allgather_ring, pipelined_chain, linear"),
    (("--bench", "allreduce,alltoall", "--algo", "rign"),
     "valid: mpi, all, or for allreduce: recursive_doubling, rabenseifner, ring, fan_in_fan_out; "
     "alltoall: linear, pairwise, bruck"),
    (("--bench", "pingpong", "--algo", "ring"), "none of the benchmarks asked for (pingpong)"),
    (("--bench", "allgather", "--trace"), "--trace records the messages of our own algorithms"),
    (("--bench", "allgather", "--algo", "ring", "--segment", "0"), "--segment must be at least 1"),
])
def test_bad_algo_options_exit_2_and_store_nothing(tmp_path, argv, message):
    p = mpiscope("run", "-n", 2, "--sizes", 8, *argv, out=tmp_path)
    assert p.returncode == 2
    assert message in p.stderr
    assert not tmp_path.exists() or not any(tmp_path.iterdir())


def test_model_check_on_a_run(tmp_path):
    run, summary = run_ok("-n", 2, "--bench", "pingpong,allgather,allreduce", "--algo", "ring,bruck,rabenseifner",
                          "--sizes", "8,1K,16K", "--reps-max", 40, "--time-budget", 0.3, out=tmp_path)
    p = mpiscope("model", "check", run, "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["p"] == 2 and doc["params"]["alpha"] > 0 and doc["params"]["beta"] > 0
    keys = {(r["bench"], r["algo"], r["size"]) for r in doc["rows"]}
    # "ring" is an algorithm of both collectives, bruck of allgather only
    assert keys == {(b, a, s) for b, a in [("allgather", "ring"), ("allgather", "bruck"),
                                          ("allreduce", "ring"), ("allreduce", "rabenseifner")]
                    for s in (8, 1024, 16384)}
    for r in doc["rows"]:
        assert r["measured_s"] > 0 and r["hockney_s"] > 0
        assert r["hockney_rel_error"] == pytest.approx((r["hockney_s"] - r["measured_s"]) / r["measured_s"])
    # a machine model with sender/receiver costs adds that column
    machine = tmp_path / "machine.json"
    machine.write_text(json.dumps({"alpha_s": "0.3us", "beta_s": "0.05ns/B", "alpha_r": "0.7us",
                                   "beta_r": "0.1ns/B", "gamma": "0.1ns/B"}))
    p = mpiscope("model", "check", run, "--machine", machine)
    assert p.returncode == 0, p.stderr
    assert "send/recv (us)" in p.stdout and "machine model file" in p.stdout
    assert "allreduce  rabenseifner" in p.stdout
    # a run without our algorithms is refused with a hint
    plain, _ = run_ok("-n", 2, "--bench", "pingpong", "--sizes", "8,1K", "--reps-max", 20, out=tmp_path)
    p = mpiscope("model", "check", plain)
    assert p.returncode == 2 and "--algo all" in p.stderr
