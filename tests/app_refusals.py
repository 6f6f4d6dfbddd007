# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: `mpiscope app compare` with bad input, through the CLI's
entry point in the test's process, must be refused with one line naming it
before anything is launched or written."""

from mpiscope.cli.main import main
from mpiscope.measure import launch


def refused(argv, needle, tmp_path, monkeypatch, capsys):
    """`app compare ARGV` ({vars}: a file of one variable) exits 2 with one error line holding `needle`."""

    def no_launch(*a, **kw):
        raise AssertionError("bad input reached a launch")

    monkeypatch.setattr(launch, "execute", no_launch)
    monkeypatch.delenv("MPISCOPE_OUT", raising=False)
    vars_file = tmp_path / "vars"
    vars_file.write_text("A=1\n")
    out = tmp_path / "fresh"
    try:
        code = main(["app", "compare", "--out", str(out), *(a.format(vars=vars_file) for a in argv)])
    except SystemExit as e:  # refused as the command line is read
        code = e.code
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert code == 2 and len(errors) == 1 and errors[0] == err.splitlines()[-1], err
    assert errors[0].startswith("mpiscope: error:") and needle in errors[0], err
    assert not out.exists()
