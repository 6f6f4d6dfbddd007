"""`mpiscope run`: launch the engine, ingest its raw files, record the run.

A run directory is built under a hidden temporary name and renamed once its
dataset and context are written; bad input removes it, a failed launch or a
crashed rank leaves a run marked failed with what was measured.
"""

import datetime
import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from pathlib import Path

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from . import SCHEMA_VERSION, catalog, launch, store
from .atomic import write_text
from .build import REPO, ensure_engine
from .errors import UsageError
from .plan import relevant_env
from .sizes import format_size

USAGE_MARKER = "mpiscope-engine: usage error:"


def git_sha():
    try:
        sha = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "-uno"],
                               capture_output=True, text=True).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def new_run_id():
    return datetime.datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


def _progress():
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=None, transient=False,
                    disable=not sys.stderr.isatty() and os.environ.get("MPISCOPE_PROGRESS") != "1")


def _launch_all(plan, engine, tmp, commands):
    """Runs every launch; returns (status, error text or None)."""
    total = plan.series_count() * plan.launches
    with _progress() as progress:
        task = progress.add_task("measuring", total=total)

        def on_progress(text):
            item = json.loads(text)
            progress.update(task, advance=1, description=f"{item['bench']} {format_size(item['size'])}"
                                                        f" ({item['reps']} reps, {item['stop']})")

        for k in range(plan.launches):
            out_dir = tmp / "raw" / f"launch-{k}"
            out_dir.mkdir(parents=True)
            cmd = launch.command(mpi=plan.mpi, launcher=plan.launcher, np=plan.np, engine=engine,
                                 engine_args=plan.engine_args(k, out_dir), hostfile=plan.hostfile,
                                 oversubscribe=plan.oversubscribe, mpirun=plan.mpirun)
            commands.append(cmd)
            env = launch.launch_env(plan.mpi)
            if plan.launcher == "srun":
                env = launch.srun_env(env, plan.hostfile)
            try:
                rc, err = launch.execute(cmd, env, tmp / f"launch-{k}.log", on_progress)
            except FileNotFoundError:
                raise UsageError(f"launcher '{cmd[0]}' was not found; install it or choose another "
                                 f"with --launcher/--mpirun") from None
            if rc != 0 and USAGE_MARKER in err:
                message = err[err.index(USAGE_MARKER) + len(USAGE_MARKER):].strip().splitlines()[0]
                raise UsageError(message)
            if rc != 0:
                return "failed", _failure(k, rc, err)
    return "completed", None


def _failure(launch_index, rc, stderr):
    """One line for the user: the engine's own message when it left one."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip().strip("-")]
    ours = [l for l in lines if l.startswith("mpiscope-engine:")]
    why = ours[0] if ours else (lines[-1] if lines else "no message")
    return (f"launch {launch_index} exited with code {rc}: {why} "
            f"(launcher output: launch-{launch_index}.stderr in the run directory)")


def run(plan, argv):
    """Measures `plan`; returns (run directory, context)."""
    engine = ensure_engine(plan.mpi)
    plan.out.mkdir(parents=True, exist_ok=True)
    run_id = new_run_id()
    tmp = plan.out / f".{run_id}.partial"
    tmp.mkdir()
    commands = []
    started = time.time()
    try:
        status, error = _launch_all(plan, engine, tmp, commands)
    except KeyboardInterrupt:
        status, error = "failed", "interrupted by the user"
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    context = {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "created": datetime.datetime.fromtimestamp(started).isoformat(timespec="seconds"),
        "duration_s": round(time.time() - started, 3),
        "status": status,
        "error": error,
        "command": list(argv),
        "launch_commands": [list(map(str, c)) for c in commands],
        "mpi": plan.mpi,
        "launcher": plan.launcher,
        "np": plan.np,
        "benches": plan.benches,
        "sizes": plan.sizes,
        "launches": plan.launches,
        "seed": plan.seed,
        "git_sha": git_sha(),
        "plan": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(plan).items()},
        "oversubscribed": plan.oversubscribe,
        "env": relevant_env(),
    }
    store.ingest(tmp, context)
    write_text(tmp / "context.json", json.dumps(context, indent=2, default=str))
    final = plan.out / run_id
    os.rename(tmp, final)
    catalog.record(plan.out, final, context)
    return final, context
