"""The engine's stopping rule on known numbers (engine/tests/stoprule_check.c):
the median's CI half-width, the projected repetitions, and when a CI target is
out of reach. Arithmetic only, so it cannot depend on the machine's load."""

import subprocess

from mpiscope.engine import build


def test_the_stopping_rule_arithmetic():
    checker = build.make("openmpi", "tests") / "stoprule-check"
    checked = subprocess.run([str(checker)], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0 and checked.stdout.strip() == "ok", checked.stdout + checked.stderr
