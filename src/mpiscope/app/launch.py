# SPDX-License-Identifier: BSD-3-Clause
"""One launch of an application under one configuration, and how it is started:
the user's own launch command after `--` (`mpirun -n 4 ./app`, `srun ./app`,
`mpiexec -f hosts ...`) runs as given; the application alone after `--`, with
--cluster, --hostfile, -n or --launcher, is started as `mpiscope run` starts
the engine (the MPI's launcher or srun; on an emulated cluster as `profile
--cluster` does).

A configuration's variables reach the ranks as the library says (mpilibs:
pass_to_ranks). The wall time is the monotonic clock around the whole launch;
its output goes to RUN/launch-<k>.out and .stderr."""

from __future__ import annotations

import datetime
import math
import re
import time
import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from mpiscope import mpilibs
from mpiscope.common import hostfiles
from mpiscope.common.atomic import write_text
from mpiscope.common.errors import UsageError
from mpiscope.measure import launch, placement
from mpiscope.measure.explain import explanation
from mpiscope.measure.user_command import check_command, on_cluster

OK, FAILED, METRIC_MISSING = "ok", "failed", "metric-missing"
EXAMPLE = "mpiscope app compare --config tuned=tune-out/ -- mpirun -n 4 ./app"
HOSTFILE = "hostfile"  # --hostfile in the launcher's syntax, in the run directory
TAIL_CHARS = 2000  # of a launch's stderr, kept in launches.parquet


@dataclass
class Start:
    """How every launch starts the application."""

    command: list  # after --: the launch command, or the application alone
    launcher_family: str  # the MPI library's key: how variables reach the ranks
    alone: bool = False  # mpiscope builds the launch around the application
    cluster: str | None = None
    layout: dict | None = None  # placement.resolve's (-n, --hostfile, --launcher)
    launcher: str = "mpirun"
    mpirun: str | None = None  # the MPI's own launcher program
    argv: list | None = None  # the launch command, once built
    env: dict | None = None  # its environment before a configuration's variables
    context: dict = field(default_factory=dict)  # for the run's context (the cluster's ground truth)

    @property
    def np(self) -> int | None:
        if self.layout:
            return self.layout["np"]
        return len((self.context.get("cluster") or {}).get("placement") or ()) or None

    def build(self, run_dir: Path) -> None:
        """The launch command and its environment; a hostfile is written into `run_dir`."""
        if self.argv is not None:
            return
        lay, hostfile = self.layout, None
        if lay["hosts"]:
            hostfile = (run_dir / HOSTFILE).absolute()
            form = launch.launcher_of(self.launcher_family, self.launcher).hostfile_form
            write_text(hostfile, hostfiles.render(form, lay["hosts"], lay["np"]))
        self.argv = launch.command(
            launcher_family=self.launcher_family,
            launcher=self.launcher,
            np=lay["np"],
            engine=self.command[0],
            engine_args=self.command[1:],
            hostfile=hostfile,
            oversubscribe=lay["oversubscribe"],
            mpirun=self.mpirun,
            nodes=lay["nodes"],
            ppn=lay["ppn"],
            launcher_args=lay["launcher_args"],
        )
        self.env = launch.launch_env(self.launcher_family)
        if self.launcher == "srun":
            self.env = launch.srun_env(self.env, hostfile)

    def env_of(self, config) -> dict:
        """The launch's environment under `config`."""
        env = dict(self.env)
        if config.env:
            env.update(config.env)
            program = None if self.cluster else self.argv[0]  # None: the library's own launcher
            mpilibs.get(self.launcher_family).pass_to_ranks(env, dict(config.env), program)
        return env


def plan_start(command, at) -> Start:
    """How to start the application, from the LaunchRequest `at` (its
    installation identified); everything checked, nothing written."""
    mpi, cluster, np, hostfile = at.installation, at.cluster, at.np, at.hostfile
    launcher, launcher_args = at.launcher, at.launcher_args
    alone = bool(cluster or hostfile or np is not None or launcher or launcher_args)
    command = check_command(command, EXAMPLE)
    if not alone:
        return Start(command, mpi.launcher_family, argv=list(command), env=launch.launch_env(mpi.launcher_family))
    programs = {"srun", *(p for lib in mpilibs.LIBRARIES for p in lib.launcher_programs)}
    if Path(command[0]).name.split(".")[0] in programs:  # mpirun.openmpi, mpiexec.hydra too
        raise UsageError(
            f"with --cluster, --hostfile, -n or --launcher mpiscope starts the application: "
            f"give the application alone after -- (not '{command[0]}'), or give your own "
            f"launch command without those options"
        )
    if cluster:
        if hostfile or launcher or launcher_args:
            raise UsageError(
                "--cluster starts the application with the MPI's own launcher on the emulated "
                "hosts, one rank a slot: drop --hostfile, --launcher and --launcher-args"
            )
        argv, env, placed = on_cluster(cluster, mpi, np, command)
        return Start(command, mpi.launcher_family, True, cluster=cluster, argv=argv, env=env, context=placed)
    launcher = launcher or "mpirun"
    if launcher == "mpirun" and mpi.launcher is None:
        raise UsageError(f"no mpirun or mpiexec beside {mpi.wrapper}; give your own launch command after --")
    layout = placement.resolve(dataclasses.replace(at, launcher=launcher), mpi.launcher_family, None, _ranks_needed)
    return Start(
        command,
        mpi.launcher_family,
        True,
        layout=layout,
        launcher=launcher,
        mpirun=mpi.launcher if launcher == "mpirun" else None,
    )


def _ranks_needed(_cluster):
    raise UsageError("-n N: give the number of ranks (or a --hostfile, whose slots give it)")


@dataclass(frozen=True)
class Launch:
    """One launch as measured and stored (a row of launches.parquet)."""

    index: int  # k: its place in the run (warm-up launches included)
    config: str
    round: int  # 1, 2, …: the warm-up rounds' and the counted rounds' apart
    warmup: bool
    started: str  # local time, ISO 8601
    wall_s: float
    exit_code: int
    metric: float | None  # --metric's value (None: not asked for, or missing)
    status: str  # ok | failed | metric-missing
    reason: str | None  # why it does not count, in one line
    stderr_tail: str

    @property
    def ok(self) -> bool:
        return self.status == OK

    def value(self, with_metric: bool) -> float:
        return self.metric if with_metric else self.wall_s


def compile_metric(text: str | None) -> re.Pattern | None:
    """--metric REGEX: it compiles and has a group to capture the number."""
    if text is None:
        return None
    try:
        pattern = re.compile(text, re.MULTILINE)
    except re.error as exc:
        raise UsageError(
            f"--metric '{text}' is not a regular expression ({exc}); e.g. --metric 'Loop time of ([0-9.]+)'"
        ) from None
    except (RecursionError, OverflowError, MemoryError):  # Python's compiler recurses per nesting level
        raise UsageError(
            f"--metric '{text[:60]}…' nests too deeply for Python's regular expressions to "
            f"compile; write a flatter one, e.g. --metric 'Loop time of ([0-9.]+)'"
        ) from None
    if pattern.groups < 1:
        raise UsageError(
            f"--metric '{text}' has no group: put the number in parentheses, e.g. --metric 'Loop time of ([0-9.]+)'"
        )
    return pattern


def read_metric(pattern: re.Pattern, texts) -> tuple[float | None, str | None]:
    """(value, None) from the first group of the last match in the first of
    `texts` that matches; (None, why) when none does or it is no number."""
    for text in texts:
        matches = list(pattern.finditer(text))
        if matches:
            found = matches[-1].group(1)
            try:
                value = float(found)
            except (TypeError, ValueError):
                return None, f"the metric's group matched '{found}', which is not a number"
            return (value, None) if math.isfinite(value) else (None, f"the metric is {found}")
    return None, f"no match of --metric '{pattern.pattern}' in what the launch wrote"


def run_launch(
    start: Start,
    config,
    *,
    index: int,
    round_: int,
    warmup: bool,
    run_dir: Path,
    metric: re.Pattern | None = None,
    timeout: float | None = None,
) -> Launch:
    """Launches the application once under `config`, and waits for it."""
    out = run_dir / f"launch-{index}.out"
    began = datetime.datetime.now().isoformat(timespec="seconds")
    t0 = time.monotonic()
    try:
        rc, err, _ = launch.execute(start.argv, start.env_of(config), out, _not_ours, timeout=timeout)
    except FileNotFoundError as exc:
        rc, err = 127, f"{start.argv[0]}: {exc.strerror or exc}\n"
    wall = time.monotonic() - t0
    value, missing = None, None
    if metric is not None:
        stdout = out.read_text(errors="replace") if out.is_file() else ""
        value, missing = read_metric(metric, (stdout, err))
    if rc != 0:
        status, reason = FAILED, f"exit code {rc}: {explanation(err)}"
    elif missing:
        status, reason = METRIC_MISSING, missing
    else:
        status, reason = OK, None
    return Launch(index, config.name, round_, warmup, began, wall, rc, value, status, reason, err[-TAIL_CHARS:])


def _not_ours(_line):
    """The application's lines that look like the engine's progress: not progress here."""
