# SPDX-License-Identifier: BSD-3-Clause
"""The engine's stopping rule on known numbers (native/engine/tests/stoprule_check.c):
the median's CI half-width, the projected repetitions, when a CI target is
out of reach, and the target of samples between ranks' clocks. Arithmetic only, so it cannot depend on the machine's load."""

import subprocess

from mpiscope.engine import build
from mpiscope.stats.summary import median_ci_ranks


def test_the_stopping_rule_arithmetic():
    checker = build.make("openmpi", "tests") / "stoprule-check"
    checked = subprocess.run([str(checker)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0 and checked.stdout.strip() == "ok", checked.stdout + checked.stderr


def test_the_engine_brackets_the_median_with_the_ranks_show_reports():
    """The engine stops a series on the same order statistics that `show`
    reports (stats.summary.median_ci_ranks, exact binomial), so a series
    stopped at ±2 % shows ±2 %: every n up to 3000 and some far beyond."""
    checker = build.make("openmpi", "tests") / "stoprule-check"
    ns = [*range(1, 3001), 4999, 10007, 65536, 100000, 1000003]
    out = subprocess.run([str(checker), "ranks", *map(str, ns)], capture_output=True, text=True,
                         timeout=60, check=True).stdout.split("\n")
    for n, line in zip(ns, out):
        got = tuple(int(x) for x in line.split())
        if n < 6:  # no interval: the engine keeps measuring
            assert got == (n, -1, -1)
            continue
        j, k, coverage = median_ci_ranks(n)
        assert got == (n, j - 1, k - 1), f"n={n}: engine {got[1:]}, Python {(j - 1, k - 1)}"
        assert coverage >= 0.95
