# SPDX-License-Identifier: BSD-3-Clause
"""Where `mpiscope run`'s defaults come from, parsed in this process: the
command line over MPISCOPE_OUT over the project file over the user file,
and --out (or MPISCOPE_OUT) for every command that reads runs."""

from mpiscope.cli import config_defaults
from mpiscope.cli.main import build_parser


def _run_args(*argv):
    """`mpiscope run` arguments with the defaults the environment and files set."""
    parser = build_parser("run")
    config_defaults.apply(parser, "run")
    return parser.parse_args(["run", *argv])


def test_precedence_command_line_environment_project_user(clean_env, monkeypatch):
    clean_env["user"].write_text('out = "user-out"\n[run]\nnp = 3\nmpi = "mpich"\ntimer = "clock"\n')
    args = _run_args()
    assert (args.out, args.np, args.mpi, args.timer, args.cache) == \
        ("user-out", 3, "mpich", "clock", "warm")
    clean_env["project"].write_text('out = "project-out"\n[run]\nnp = 4\n')
    args = _run_args()
    assert (args.out, args.np, args.mpi) == ("project-out", 4, "mpich")
    monkeypatch.setenv("MPISCOPE_OUT", "env-out")
    assert _run_args().out == "env-out"
    args = _run_args("--out", "cli-out", "-n", "5")
    assert (args.out, args.np, args.mpi) == ("cli-out", 5, "mpich")


def test_out_applies_to_every_command_and_runs_rm(clean_env, monkeypatch):
    monkeypatch.setenv("MPISCOPE_OUT", "~/runs")
    for argv in (["show"], ["report"], ["runs"], ["runs", "rm", "x"], ["model", "check"]):
        parser = build_parser(argv[0])
        config_defaults.apply(parser, argv[0])
        assert parser.parse_args(argv).out.endswith("/runs") and "~" not in \
            parser.parse_args(argv).out, argv
