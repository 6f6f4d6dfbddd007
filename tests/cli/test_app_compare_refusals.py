# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope app compare` refuses bad input with one line naming it, before
anything is launched or written (app_refusals.py): the cases checked once
the MPI library was asked (its compiler wrapper identifies it)."""

import pytest

from app_refusals import refused


@pytest.mark.parametrize("argv, needle", [
    (["--config", "a={vars}"], "launch command after --"),
    (["--", "true"], "give at least one --config"),
    (["--config", "a={vars}", "--", "nosuchprogram"], "'nosuchprogram' was not found"),
    (["--config", "a=nosuch", "--", "true"], "nosuch is neither"),
    (["--config", "a={vars}", "--config", "a={vars}", "--", "true"], "given more than once"),
    (["--config", "a={vars}", "-n", "2", "--", "mpirun.openmpi", "true"], "give the application alone"),
    (["--config", "a={vars}", "--launcher", "srun", "--", "true"], "-n N: give the number of ranks"),
    (["--config", "a={vars}", "--cluster", "nosuchcluster", "--", "true"], "nosuchcluster"),
    (["--config", "a={vars}", "--cluster", "c", "--hostfile", "{vars}", "--", "true"], "drop --hostfile"),
    (["--config", "a={vars}", "--hostfile", "{vars}", "--", "true"], "'A=1' is not a host name"),
])
def test_app_compare_refuses_bad_input_before_anything_runs(argv, needle, tmp_path, monkeypatch, capsys):
    refused(argv, needle, tmp_path, monkeypatch, capsys)
