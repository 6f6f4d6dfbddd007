# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope run` as a process with bad input: a clear message, exit code 2,
and no run left behind."""

import pytest

from runcli import mpiscope, run_dirs


def _fails_cleanly(p, out, *needles):
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    for needle in needles:
        assert needle in p.stderr, p.stderr
    assert run_dirs(out) == []


@pytest.mark.parametrize("args, needles", [
    (["--sizes", "abc"], ["'abc' is not a size"]),
    (["-n", "0"], ["-n/--np must be at least 1"]),
    (["--bench", "pingpang"], ["unknown benchmark 'pingpang'", "pingpong"]),
    (["-n", "1", "--bench", "pingpong"], ["needs at least 2 ranks"]),
    (["-n", "3", "--bench", "multipair"], ["even -n"]),
    (["--reps-min", "50", "--reps-max", "10"], ["--reps-min (50) is larger"]),
    (["--clock-inject", "fifty"], ["MAX_OFFSET_US:MAX_DRIFT_PPM"]),
    (["--hostfile", "/nonexistent/hosts"], ["does not exist"]),
])
def test_bad_arguments(tmp_path, args, needles):
    _fails_cleanly(mpiscope("run", *args, out=tmp_path), tmp_path, *needles)


def test_argparse_errors_exit_2(tmp_path):
    p = mpiscope("run", "--sync", "sometimes", out=tmp_path)
    assert p.returncode == 2 and "invalid choice" in p.stderr


def test_pairs_file_listing_a_rank_twice(tmp_path):
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("0 1\n2 1\n")
    p = mpiscope("run", "-n", 4, "--bench", "pairs", "--pairs", pairs, out=tmp_path / "runs")
    _fails_cleanly(p, tmp_path / "runs", "rank 1 is listed twice")


def test_pairs_file_rank_out_of_range(tmp_path):
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("0 7\n")
    p = mpiscope("run", "-n", 4, "--bench", "pairs", "--pairs", pairs, out=tmp_path / "runs")
    _fails_cleanly(p, tmp_path / "runs", "rank 7 is out of range")
