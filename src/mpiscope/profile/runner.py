# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope profile -- LAUNCH COMMAND…`: run an application's own launch
command with the interposition library preloaded into its ranks, then store
what the ranks wrote as a run of kind "profile".

The library reaches the ranks, not the launcher, the way the MPI library
says (mpilibs: pass_to_ranks): with Open MPI's mpirun through
mca_base_env_list (which mpirun forwards to every rank, also on other
hosts); with any other launcher (Hydra, srun) through the environment, which
they pass on. The run directory is built under a hidden name and
renamed when complete, as `mpiscope run` does."""

from __future__ import annotations

import datetime
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

from mpiscope import mpilibs
from mpiscope.common.atomic import write_text
from mpiscope.common.errors import UsageError
from mpiscope.measure.launch import launch_env
from mpiscope.measure.plan import relevant_env
from mpiscope.measure.user_command import check_command, on_cluster
from mpiscope.profile import files, monitoring, watch
from mpiscope.profile.build import LIBRARY, ensure_library
from mpiscope.profile.ingest import ingest
from mpiscope.store import catalog
from mpiscope.store.layout import SCHEMA_VERSION


def profile_env(
    mpi,
    command,
    raw_dir: Path,
    trace_events: int,
    library_view: Path | None,
    library: Path,
    base=None,
    own_launcher=False,
):
    """The launcher's environment: the library preloaded into the ranks.
    `own_launcher`: the MPI library's own launcher starts the ranks (else
    the command's first word says what does)."""
    lib = mpilibs.get(mpi.launcher_family)
    env = launch_env(mpi.launcher_family, base)
    ours = {"MPISCOPE_PROFILE_DIR": str(raw_dir)}
    if trace_events:
        ours["MPISCOPE_PROFILE_TRACE"] = str(trace_events)
    if library_view is not None:
        ours["MPISCOPE_PROFILE_LIBVIEW"] = "1"  # per collective call (native/pmpi/libview.c)
    preload = ":".join(p for p in (str(library), env.get("LD_PRELOAD", "")) if p)
    env.update(ours)
    lib.pass_to_ranks(env, {"LD_PRELOAD": preload, **ours}, None if own_launcher else command[0])
    if library_view is not None:
        env.update(lib.settings_env(monitoring.mca(library_view)))
    return env


def _overhead_summary(ranks: dict) -> dict:
    if not ranks:
        return {}
    per_call = [r["overhead"]["per_call_ns"] for r in ranks.values()]
    shares = [r["overhead"]["share_of_wall"] for r in ranks.values() if r["overhead"]["share_of_wall"] is not None]
    return {
        "per_call_ns_max": max(per_call),
        "per_call_ns_median": sorted(per_call)[len(per_call) // 2],
        "share_of_wall_max": max(shares) if shares else None,
        "calls": sum(r["calls"] for r in ranks.values()),
    }


def profile(command, at, *, out: Path, trace_events=0, library_view=False, label=None, argv=()):
    """Runs `command` under the profiler with the MPI of the LaunchRequest
    `at`; returns (run directory, context). With `at.cluster`: `command` is
    the application alone, started on `at.np` slots (default: all) of that
    emulated cluster."""
    cluster, np = at.cluster, at.np
    command = check_command(command, "mpiscope profile -- mpirun -n 4 ./app")
    if np is not None and not cluster:
        raise UsageError("-n goes with --cluster; without it give the ranks in your launch command (mpirun -n 4 ...)")
    the_mpi = at.find_installation()
    lib = mpilibs.get(the_mpi.launcher_family)
    if library_view and not lib.monitoring:
        raise UsageError(
            f"--library-view reads Open MPI's monitoring component; {the_mpi.name} has none "
            f"(profile with --mpi openmpi, or leave --library-view out)"
        )
    library = ensure_library(the_mpi) / LIBRARY
    placed, base = {}, None
    if cluster:  # checked (up, enough slots) before anything is made
        # With MPICH, hydra passes the preload to the ranks alone (-genv), so
        # neither its proxies nor the cluster's rsh load the library.
        preload = [p for p in (str(library), os.environ.get("LD_PRELOAD", "")) if p] if lib.launcher_preloads else []
        command, base, placed = on_cluster(cluster, the_mpi, np, command, preload)
    out.mkdir(parents=True, exist_ok=True)
    from mpiscope.measure.runner import git_sha, new_run_id  # one way to name runs

    run_id = new_run_id()
    tmp = out / f".{run_id}.partial"
    raw = tmp / files.RAW_DIR
    raw.mkdir(parents=True)
    view_dir = tmp / files.MONITORING_DIR if library_view else None
    if view_dir:
        view_dir.mkdir()
    env = profile_env(
        the_mpi,
        command,
        raw.absolute(),
        trace_events,
        view_dir.absolute() if view_dir else None,
        library,
        base=base,
        own_launcher=bool(cluster),
    )
    if cluster and lib.launcher_preloads:
        # The ranks get the library through -genv; the launcher keeps what it had.
        env.pop("LD_PRELOAD")
        if base.get("LD_PRELOAD"):
            env["LD_PRELOAD"] = base["LD_PRELOAD"]
    started = time.time()
    try:
        with open(tmp / "launch-0.log", "w") as log, open(tmp / "launch-0.stderr", "w") as err:
            proc = subprocess.Popen(command, env=env, stdout=log, stderr=err, stdin=subprocess.DEVNULL)
            try:
                rc, stopped = watch.wait(proc, raw)
            except KeyboardInterrupt:
                proc.kill()
                proc.wait()
                rc, stopped = -2, False
        duration = time.time() - started
        context = {
            "schema_version": SCHEMA_VERSION,
            "kind": files.KIND,
            "run_id": run_id,
            "label": label,
            "created": datetime.datetime.fromtimestamp(started).isoformat(timespec="seconds"),
            "duration_s": round(duration, 3),
            "command": list(argv),
            "launch_commands": [command],
            "mpi": the_mpi.launcher_family,
            "mpi_identity": {**the_mpi.identity(), "pmpi_library": str(library)},
            "benches": [files.KIND],
            "trace_events": trace_events,
            "library_view": bool(library_view),
            "git_sha": git_sha(),
            "env": relevant_env(),
            "exit_code": rc,
            **placed,
        }
        try:
            context.update(ingest(tmp))
        except ValueError as e:
            context.update({"np": None, "ranks": {}, "missing_ranks": []})
            context["status"], context["error"] = "failed", f"{e} (exit code {rc}; see launch-0.stderr)"
        else:
            missing = context["missing_ranks"]
            if stopped and not missing:
                context["finalize_stopped_after_s"] = watch.FINALIZE_GRACE_S
                context["warning"] = (
                    f"every rank wrote its profile, but the launch had not ended "
                    f"{watch.FINALIZE_GRACE_S:.0f} s later and was stopped (exit code {rc}): the MPI "
                    f"library did not return from MPI_Finalize (MPICH 4.0's ch4:ucx can hang there, "
                    f"pmodels/mpich#6596); the profile is whole"
                )
            if (rc != 0 and not stopped) or missing:
                context["status"] = "failed"
                context["error"] = (f"the launch exited with code {rc}" if rc else "") + (
                    ("; " if rc else "") + f"rank(s) {', '.join(map(str, missing))} wrote no profile "
                    f"(they did not reach MPI_Finalize): their calls are missing, every other rank's "
                    f"profile is whole"
                    if missing
                    else ""
                )
            else:
                context["status"], context["error"] = "completed", None
        context["overhead"] = _overhead_summary(context.get("ranks") or {})
        write_text(tmp / "context.json", json.dumps(context, indent=2, default=str))
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    final = out / run_id
    os.rename(tmp, final)
    catalog.record(out, final, context)
    return final, context


def launch_output(run_dir: Path, limit=4000) -> str:
    """The end of what the launch wrote on stderr."""
    path = Path(run_dir) / "launch-0.stderr"
    text = path.read_text(errors="replace") if path.is_file() else ""
    return text[-limit:]
