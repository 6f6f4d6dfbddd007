# SPDX-License-Identifier: BSD-3-Clause
"""After a finished run the entry point ends the process at once, its output
flushed; otherwise it exits as sys.exit does, the interpreter's shutdown included."""

import subprocess
import sys

import pytest

SCRIPT = """
import atexit, sys
from mpiscope.cli import run_exit
atexit.register(lambda: print("shutdown ran"))
sys.stdout.write("table")  # left in the buffer: end() must flush it
sys.stderr.write("note")
if {finished}:
    run_exit.finished()
run_exit.end({code})
"""


@pytest.mark.parametrize("code", [0, 1])
def test_a_finished_run_ends_at_once_with_its_output_flushed(code):
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(finished=True, code=code)], capture_output=True, text=True
    )
    assert (out.returncode, out.stdout, out.stderr) == (code, "table", "note")


def test_otherwise_the_usual_exit():
    out = subprocess.run([sys.executable, "-c", SCRIPT.format(finished=False, code=2)], capture_output=True, text=True)
    assert (out.returncode, out.stdout) == (2, "tableshutdown ran\n")
