# SPDX-License-Identifier: BSD-3-Clause
"""Every command: its name, the module under cli/ that defines it (as
add_<name>_command), and its one-line help. The top-level parser lists them
all without importing any command module; only the command that runs is
imported and registered, so start-up does not pay for SciPy, DuckDB or
matplotlib."""

import argparse
from collections import namedtuple

Command = namedtuple("Command", "module help")


COMMANDS = {
    "run": Command("run", "measure: launch the engine on MPI ranks and store a run"),
    "build": Command("build", "build the engine for an MPI (--mpicc) now and show what was found"),
    "sbatch": Command("sbatch", "print a Slurm batch script for a run (mpiscope sbatch ... > job.sh)"),
    "runs": Command(
        "runs",
        "list the runs under the output root; runs rm deletes runs, runs ingest stores them again from their raw files",
    ),
    "history": Command(
        "history", "series of comparable runs over time: change points, what changed, --check for nightly jobs"
    ),
    "import": Command("imports", "store OSU, IMB and ReFrame logs as runs of kind imported, for history"),
    "show": Command("views", "summarize a run: median with 95%% CI and tails per benchmark and size"),
    "export": Command("views", "export a run as CSV, JSON or OSU-style text"),
    "fit": Command("analysis", "fit Hockney models (α + β·n) and protocol zones to a run"),
    "compare": Command("analysis", "compare two runs: ratio of medians, test and verdict per size"),
    "methods": Command("methods", "peer tools' numbers beside mpiscope's median, each difference split into causes"),
    "loggp": Command("loggp", "LogGP parameters: EEL, o_s, o_r, g, G, L, g/G with CIs"),
    "layers": Command("loggp", "the same message over MPI, TCP sockets and shared memory"),
    "report": Command("report", "write a self-contained HTML report of one or more runs"),
    "cluster": Command("cluster", "emulated clusters: hosts with shaped links on this machine (root)"),
    "model": Command("model", "cost models of our own collective algorithms: predict, check"),
    "sim": Command("sim", "schedules of our own algorithms and their simulation: schedule, run, predict, check"),
    "tune": Command(
        "tune", "write collective-selection files the MPI library uses, decided by statistics and verified"
    ),
    "timechart": Command("timechart", "draw the sends and receives of a traced algorithm (SVG)"),
    "transport": Command(
        "transport", "the intra-node transport lab: probe CMA and placement, advise MPI settings from crossovers"
    ),
    "profile": Command(
        "profile",
        "run an application under the communication profiler and store its profile; profile weights: a tuner's weights",
    ),
    "app": Command("app", "app compare: an application under several configurations, each one's speedup"),
    "config": Command("config", "show the defaults from MPISCOPE_OUT and the config files, and where each comes from"),
    "completion": Command("completion", "print a bash or zsh completion script"),
}


def command_parser(subparsers, name, func=None, **kw):
    """The parser of command `name`: its help from the table above, descriptions
    and examples printed as written, `func(args)` what it runs."""
    p = subparsers.add_parser(
        name, help=COMMANDS[name].help, formatter_class=argparse.RawDescriptionHelpFormatter, **kw
    )
    if func is not None:
        p.set_defaults(func=func)
    return p
