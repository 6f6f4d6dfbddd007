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
    (["--config", "a={vars}", "--metric", "([", "--", "true"], "--metric '([' is not a regular expression"),
    (["--config", "a={vars}", "--metric", "Loop time", "--", "true"], "--metric 'Loop time' has no group"),
    (["--config", "a={vars}", "--ci-width", "-1", "--", "true"], "--ci-width must be a relative width"),
    (["--config", "a={vars}", "--time-budget", "0", "--", "true"], "--time-budget must be a positive number of seconds"),
    (["--config", "a={vars}", "--warmup", "-1", "--", "true"], "--warmup"),
    (["--config", "a={vars}", "--noise", "5", "--", "true"], "for percent write 5%"),
    (["--config", "a={vars}", "--alpha", "1.5", "--", "true"], "--alpha must be between 0 and 1"),
    (["--config", "a={vars}", "--resamples", "1", "--", "true"], "--resamples"),
    (["--config", "a={vars}", "--launch-timeout", "0", "--", "true"], "--launch-timeout"),
    (["--config", "a={vars}", "--label", "latest", "--", "true"], "--label"),
    (["--config", "a={vars}", "-n", "2", "--", "mpirun.openmpi", "true"], "give the application alone"),
    (["--config", "a={vars}", "--launcher", "srun", "--", "true"], "-n N: give the number of ranks"),
    (["--config", "a={vars}", "--cluster", "nosuchcluster", "--", "true"], "nosuchcluster"),
    (["--config", "a={vars}", "--cluster", "c", "--hostfile", "{vars}", "--", "true"], "drop --hostfile"),
    (["--config", "a={vars}", "--hostfile", "{vars}", "--", "true"], "'A=1' is not a host name"),
])
def test_app_compare_refuses_bad_input_before_anything_runs(argv, needle, tmp_path, monkeypatch, capsys):
    refused(argv, needle, tmp_path, monkeypatch, capsys)
