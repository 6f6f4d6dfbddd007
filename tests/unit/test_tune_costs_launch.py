# SPDX-License-Identifier: BSD-3-Clause
"""A failed pingpong launch for the guided search's costs (tune/p2p_costs.py)
is a failure, exit 1, with what failed and what to do: not bad input."""

import argparse

import pytest

from mpiscope.cli import main as cli_main
from mpiscope.common.errors import LaunchFailed
from mpiscope.measure.plan import Plan
from mpiscope.measure import runner
from mpiscope.tune import p2p_costs


def plan(out):
    return Plan(
        np=2,
        launcher_family="openmpi",
        launcher="mpirun",
        benches=["allreduce"],
        sizes=[8],
        sync="auto",
        timer="tsc",
        cache="warm",
        reps_min=1,
        reps_max=2,
        ci_width=0.02,
        time_budget=1.0,
        launches=1,
        check=False,
        seed=1,
        out=out,
    )


def test_a_failed_pingpong_launch_is_a_failure_not_bad_input(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(runner, "run", lambda p, argv: (tmp_path, {"status": "failed", "error": "rank 1 exited"}))
    with pytest.raises(LaunchFailed) as failed:
        p2p_costs.measured_costs(plan(tmp_path), [8, 1024], say=lambda *_: None)
    assert "rank 1 exited" in str(failed.value) and "--from-run" in str(failed.value)

    class Parser:  # a command that meets the failed launch
        def parse_args(self, argv):
            return argparse.Namespace(
                func=lambda args: p2p_costs.measured_costs(plan(tmp_path), [8], say=lambda *_: None)
            )

    monkeypatch.setattr(cli_main, "build_parser", lambda command: Parser())
    assert cli_main.main(["tune"]) == 1
    assert "rank 1 exited" in capsys.readouterr().err
