# SPDX-License-Identifier: BSD-3-Clause
"""The timer falls back to clock_gettime where the CPU's counter is not
invariant, and says so: in the run's context and on stderr (a /proc/cpuinfo
without the flags, given through MPISCOPE_TEST_CPUINFO, on real Open MPI
ranks of this x86-64 host)."""

import json

import pytest

from mpiscope.store import ingest as store
from runcli import mpiscope, run_ok

FLAGS = "processor\t: 0\nflags\t\t: fpu tsc {}rdtscp\n\n"


def test_a_counter_without_invariance_gives_clock_gettime_and_says_why(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(FLAGS.format("constant_tsc "))  # no nonstop_tsc
    env = {"MPISCOPE_TEST_CPUINFO": str(cpuinfo)}
    p = mpiscope("run", "-n", 2, "--bench", "pingpong", "--sizes", 8, "--reps-max", 30, "--json",
                 out=tmp_path / "runs", env=env)
    assert p.returncode == 0, p.stderr
    assert "not invariant: no nonstop_tsc" in p.stderr and "--timer clock" in p.stderr
    timer = store.load(json.loads(p.stdout)["run_dir"])[1].context["timer"]
    assert timer["name"] == "clock" and timer["counter"] == "TSC"
    assert "nonstop_tsc" in timer["fallback"]


def test_an_invariant_counter_is_the_timer_and_no_fallback_is_said(tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text(FLAGS.format("constant_tsc nonstop_tsc "))
    run, _ = run_ok("-n", 2, "--bench", "pingpong", "--sizes", 8, "--reps-max", 30, out=tmp_path / "runs",
                    env={"MPISCOPE_TEST_CPUINFO": str(cpuinfo)})
    timer = store.load(run)[1].context["timer"]
    assert timer["name"] == "tsc" and timer["fallback"] is None
    assert timer["counter_hz"] == pytest.approx(timer["freq_hz"], rel=1e-12)
