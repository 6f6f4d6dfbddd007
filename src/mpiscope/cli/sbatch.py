# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope sbatch`: print a Slurm batch script for a run:
`mpiscope sbatch -N 2 --ppn 1 --bench pingpong > job.sh; sbatch job.sh`.

It takes every option of `mpiscope run` and the job's own (--time,
--job-name, --partition, --account). The run is checked as `mpiscope run`
would check it; the script asks Slurm for its ranks (#SBATCH lines) and runs
the same `mpiscope run` with srun inside the allocation, in this directory.
"""

import argparse
import math
import os
import shlex
import sys
from pathlib import Path

from mpiscope.cli import types
from mpiscope.cli.commands import command_parser
from mpiscope.cli.run_options import add_run_options, measure_request
from mpiscope.common.errors import UsageError

MIN_TIME_S = 300  # a job's default time limit: at least this


def _add_job_options(p) -> None:
    p.add_argument(
        "--time",
        metavar="TIME",
        type=types.slurm_time,
        help="the job's time limit, as sbatch takes it (minutes, H:MM:SS, D-HH:MM:SS); "
        "default: twice the --dry-run estimate, at least 5 minutes",
    )
    p.add_argument(
        "--job-name", default="mpiscope", type=types.slurm_name, help="the job's name (default: %(default)s)"
    )
    p.add_argument("--partition", type=types.slurm_name, help="Slurm partition")
    p.add_argument("--account", type=types.slurm_name, help="Slurm account")


def add_sbatch_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "sbatch",
        cmd_sbatch,
        description="""\
Print a Slurm batch script that runs `mpiscope run` with the same options through srun
inside the job's allocation. Takes every option of `mpiscope run`; -n, -N/--nodes and
--ppn become #SBATCH lines.\
""",
        epilog="""\
examples:
  mpiscope sbatch -N 2 --ppn 1 --bench pingpong,bw --sizes 1-1M:x4 > job.sh && sbatch job.sh
  mpiscope sbatch -n 64 --mpi mpich --suite full --time 1:00:00 --partition short > job.sh\
""",
    )
    add_run_options(p)
    p.set_defaults(launcher="srun")
    _add_job_options(p)


def cmd_sbatch(args):
    from mpiscope.measure import preview
    from mpiscope.measure.plan import make_plan

    plan = make_plan(measure_request(args))
    print(batch_script(plan, _run_words(sys.argv), args, preview.wall_time(plan)), end="")
    return 0


def _run_words(argv):
    """The `mpiscope run` options among this command's words: all but the job's
    own, in their order (split off by a parser that knows only those)."""
    words = argv[argv.index("sbatch") + 1 :] if "sbatch" in argv else list(argv)
    job = argparse.ArgumentParser(add_help=False, allow_abbrev=False)
    _add_job_options(job)
    _, rest = job.parse_known_args(words)
    if not any(w == "--launcher" or w.startswith("--launcher=") for w in rest):
        rest = ["--launcher", "srun", *rest]
    return rest


def job_time(estimate_s):
    """Twice the estimate, whole minutes, at least MIN_TIME_S; as H:MM:SS."""
    minutes = math.ceil(max(2 * estimate_s, MIN_TIME_S) / 60)
    return f"{minutes // 60}:{minutes % 60:02d}:00"


def batch_script(plan, run_words, args, estimate_s, python=None, cwd=None):
    """The script's text. `run_words`: the options for `mpiscope run`."""
    python = python or sys.executable
    cwd = cwd or os.getcwd()
    package_root = str(Path(__file__).resolve().parents[2])
    directives = [f"--job-name={args.job_name}", f"--ntasks={plan.np}"]
    if plan.nodes:
        directives.append(f"--nodes={plan.nodes}")
    if plan.ppn:
        directives.append(f"--ntasks-per-node={plan.ppn}")
    if plan.hosts and plan.launcher == "srun":
        # srun places every rank on the host the hostfile names: the job must hold them.
        directives.append("--nodelist=" + ",".join(h for h, _ in plan.hosts))
    directives.append(f"--time={args.time or job_time(estimate_s)}")
    for name in ("partition", "account"):
        if getattr(args, name):
            directives.append(f"--{name}={getattr(args, name)}")
    if any("\n" in d for d in directives):
        raise UsageError("a job option holds a line break")
    run = shlex.join([python, "-m", "mpiscope.cli", "run", *run_words])
    return "\n".join(
        [
            "#!/bin/bash",
            f"# Written by mpiscope sbatch: {shlex.join(run_words)}",
            *(f"#SBATCH {d}" for d in directives),
            "set -eu",
            f"cd {shlex.quote(cwd)}",
            "# the mpiscope that wrote this script",
            f"export PYTHONPATH={shlex.quote(package_root)}${{PYTHONPATH:+:$PYTHONPATH}}",
            f"exec {run}",
            "",
        ]
    )
