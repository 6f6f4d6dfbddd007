# SPDX-License-Identifier: BSD-3-Clause
"""What a launch tells the user, from the text alone: the launcher's
explanation without its boilerplate, a long launcher output cut in the
middle with a note, and plain progress with the time left."""

from mpiscope.measure.progress import PlainProgress

OPEN_MPI_HOSTFILE_ERROR = """\
--------------------------------------------------------------------------
Open RTE detected a parse error in the hostfile:
    /runs/.x.partial/hostfile
It occured on line number 1 on token 1.
--------------------------------------------------------------------------
[vm:27651] 3 more processes have sent help message help-hostfile.txt / parse_error
[vm:27651] Set MCA parameter "orte_base_help_aggregate" to 0 to see all help / error messages
"""

def test_the_launchers_explanation_is_the_message_not_its_boilerplate():
    from mpiscope.measure.explain import explanation

    why = explanation(OPEN_MPI_HOSTFILE_ERROR)
    assert why.startswith("Open RTE detected a parse error in the hostfile:")
    assert "line number 1" in why and "orte_base_help_aggregate" not in why
    assert explanation("noise\nmpiscope-engine: cannot write x: No space left on device\n") == \
        "mpiscope-engine: cannot write x: No space left on device"
    assert explanation(OPEN_MPI_HOSTFILE_ERROR.split("---\n")[-1]) == "no message"


def test_long_launcher_output_is_cut_in_the_middle_with_a_note(tmp_path):
    from mpiscope.measure.runner import launcher_output

    (tmp_path / "launch-0.stderr").write_text("first line\n" + "x" * 1000 + "\nlast line\n")
    assert launcher_output(tmp_path, 0, limit=2000).startswith("first line\nxxx")
    cut = launcher_output(tmp_path, 0, limit=100)
    assert cut.startswith("first line") and cut.endswith("last line\n")
    assert "characters left out; the whole output is in" in cut and len(cut) < 300


def test_plain_progress_estimates_the_time_left():
    class Out:
        text = ""

        def write(self, s):
            self.text += s

        def flush(self):
            pass

    now = [100.0]
    out = Out()
    progress = PlainProgress(4, out, clock=lambda: now[0])
    now[0] = 110.0
    progress.step("pingpong 8")
    now[0] = 120.0
    progress.step("pingpong 64")
    progress.add(2)  # refinement adds sizes: 4 left at 10 s each
    now[0] = 130.0
    progress.step("pingpong 16")
    lines = out.text.splitlines()
    assert lines[0].startswith("[1/4] pingpong 8, elapsed 0:00:10, left ~0:00:30")
    assert lines[1].startswith("[2/4] pingpong 64, elapsed 0:00:20, left ~0:00:20")
    assert lines[2].startswith("[3/6] pingpong 16, elapsed 0:00:30, left ~0:00:30")
