"""The engine's stopping rule on known numbers (engine/tests/stoprule_check.c):
the median's CI half-width, the projected repetitions, and when a CI target is
out of reach. Arithmetic only, so it cannot depend on the machine's load."""

import subprocess

from mpiscope.engine import build


def test_the_stopping_rule_arithmetic():
    target = build.REPO / "build" / "openmpi"
    made = subprocess.run(["make", "-s", "-C", str(build.ENGINE_SRC), "MPI=openmpi", f"BUILD={target}", "tests"],
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr[-3000:]
    checked = subprocess.run([str(target / "stoprule-check")], capture_output=True, text=True, timeout=60)
    assert checked.returncode == 0 and checked.stdout.strip() == "ok", checked.stdout + checked.stderr
