# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope run`: launch the engine, ingest its raw files, record the run.

A run directory is built under a hidden temporary name and renamed once its
dataset and context are written; bad input removes it, a failed launch or a
crashed rank leaves a run marked failed with what was measured.
"""

import contextlib
import datetime
import errno
import gc
import json
import os
import secrets
import shutil
import socket
import importlib
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import NamedTuple

from mpiscope.store.layout import QUALITY_FILE, SCHEMA_VERSION
from mpiscope.measure import launch, machine, processes
from mpiscope.measure.explain import explanation
from mpiscope.measure.interrupts import signals_stop_the_run
from mpiscope.stats import rto
from mpiscope.common.atomic import write_text
from mpiscope.engine.build import ensure_engine
from mpiscope.engine.locations import CHECKOUT
from mpiscope.common.errors import UsageError
from mpiscope.common.oserrors import describe
from mpiscope.measure.plan import relevant_env
from mpiscope.measure.progress import progress
from mpiscope.measure.refine import propose_sizes
from mpiscope.common.sizes import format_size
from mpiscope.common.inputs import read_json

USAGE_MARKER = "mpiscope-engine: usage error:"
# What storing a run imports (numpy, pyarrow and the modules over them): they
# are imported while the run is prepared and the launcher starts the ranks,
# when the CPUs mostly wait, rather than after the last measurement. numpy.ma
# too: numpy imports it on first use, which is pyarrow's first conversion of a
# numpy array (it looks for masked arrays), in ingest.
STORE_MODULES = (
    "numpy.ma",
    "mpiscope.store.ingest",
    "mpiscope.stats.quality",
    "mpiscope.store.series",
    "mpiscope.store.run",
)
REFINE_ROUNDS = 3


def git_sha():
    """The commit of the checkout mpiscope runs from (None for an installed package)."""
    if CHECKOUT is None:
        return None
    try:
        sha = subprocess.run(
            ["git", "-C", str(CHECKOUT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(CHECKOUT), "status", "--porcelain", "-uno"], capture_output=True, text=True
        ).stdout.strip()
        return sha + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return None


def new_run_id():
    return datetime.datetime.now().strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


HOSTFILE = "hostfile"  # the --hostfile in the launcher's syntax, in the run directory
STDERR_SHOWN = 64 * 1024  # of a failed launch's stderr, printed whole up to this


def launch_spec(plan, engine, run_dir, k, benches=None, sizes=None):
    """Launch `k` of the plan: (argv, environment, extra context). The engine
    writes under `run_dir`/raw/launch-<k>; a hostfile is run_dir/hostfile."""
    engine_args = plan.engine_args(k, run_dir / "raw" / f"launch-{k}", benches, sizes)
    if plan.cluster:
        from mpiscope.cluster.launching import cluster_launch

        return cluster_launch(
            plan.cluster, plan.launcher_family, plan.np, engine, engine_args, launcher_args=plan.launcher_args
        )
    hostfile = (run_dir / HOSTFILE).absolute() if plan.hosts else None
    cmd = launch.command(
        launcher_family=plan.launcher_family,
        launcher=plan.launcher,
        np=plan.np,
        engine=engine,
        engine_args=engine_args,
        hostfile=hostfile,
        oversubscribe=plan.oversubscribe,
        mpirun=plan.mpirun,
        nodes=plan.nodes,
        ppn=plan.ppn,
        launcher_args=plan.launcher_args,
    )
    env = launch.launch_env(plan.launcher_family)
    if plan.launcher == "srun":
        env = launch.srun_env(env, hostfile)
    return cmd, env, {}


class _Launches:
    """Starts engine launches for one run, numbering them and showing progress."""

    def __init__(self, plan, engine, tmp, progress):
        self.plan, self.engine, self.tmp, self.progress = plan, engine, tmp, progress
        self.commands = []
        self.timing = {"launch_s": 0.0, "engine": {}}  # wall time of the launches; the engine's phases
        self.failed_launch = None
        self.finalize_stopped = []  # launches stopped in MPI_Finalize (launch.FINALIZE_GRACE_S)
        self.extra_context = {}  # e.g. the emulated cluster's links as ground truth
        if not plan.cluster and plan.hosts is None and plan.launcher == "mpirun" and not plan.nodes:
            # Ranks on this host only: its RTO_min is the measured hosts'.
            self.extra_context["rto_min"] = rto.across_hosts({socket.gethostname(): rto.rto_min()})
        if plan.hosts is not None:
            write_text(tmp / HOSTFILE, plan.hostfile_text())

    def _on_progress(self, text):
        item = json.loads(text)
        if "method" in item:  # a peer's method (run --methods)
            self.progress.step(f"{item['bench']} {format_size(item['size'])} as {item['method']} times it")
            return
        algo = "" if item.get("algo", "mpi") == "mpi" else f"/{item['algo']}"
        self.progress.step(f"{item['bench']}{algo} {format_size(item['size'])} ({item['reps']} reps, {item['stop']})")

    def _on_timing(self, text):
        for phase, seconds in json.loads(text).items():
            self.timing["engine"][phase] = self.timing["engine"].get(phase, 0.0) + (seconds or 0.0)

    def run(self, benches=None, sizes=None):
        """One launch; returns None, or the failure message."""
        k = len(self.commands)
        (self.tmp / "raw" / f"launch-{k}").mkdir(parents=True)
        cmd, env, extra = launch_spec(self.plan, self.engine, self.tmp, k, benches, sizes)
        self.extra_context.update(extra)
        self.commands.append(cmd)
        self.timing.setdefault("launched_at", time.time())  # the wall clock of the first launch
        started = time.perf_counter()
        try:
            rc, err, hung = launch.execute(
                cmd,
                env,
                self.tmp / f"launch-{k}.log",
                self._on_progress,
                self._on_timing,
                getattr(self.plan, "launch_timeout", None),
            )
        except FileNotFoundError:
            raise UsageError(
                f"launcher '{cmd[0]}' was not found; install it or choose another with --launcher/--mpirun"
            ) from None
        self.timing["launch_s"] += time.perf_counter() - started
        if rc != 0 and USAGE_MARKER in err:
            message = err[err.index(USAGE_MARKER) + len(USAGE_MARKER) :].strip().splitlines()[0]
            raise UsageError(message)
        if rc == 0:
            return None
        if hung:  # every rank had stored its samples: the run keeps them
            self.finalize_stopped.append(k)
            return None
        self.failed_launch = k
        return _failure(k, rc, err)

    def refine(self, refined):
        """Adds sizes where a curve bends (--refine); records them in `refined`."""
        from mpiscope.store import ingest as store, samples

        plan = self.plan
        for _ in range(REFINE_ROUNDS):
            table = store.ingest(self.tmp, {})
            todo = {}
            for bench in plan.benches:
                if bench in plan.sizeless:
                    continue
                measured = sorted(set(plan.sizes) | set(refined.get(bench, [])))
                room = plan.refine_max - len(refined.get(bench, []))
                # Every variant (algorithm, queue depth…) is its own curve; a size one of
                # them needs is measured for all of them.
                new = set()
                for algo in samples.algos_of_bench(table, bench):
                    medians = [_median(table, bench, s, algo) for s in measured]
                    new |= set(propose_sizes(measured, medians, plan.refine_threshold, room))
                if new:
                    todo[bench] = sorted(new)[:room]
            if not todo:
                return None
            for bench, new in todo.items():
                self.progress.add(len(new))
                failure = self.run([bench], new)
                if failure:
                    return failure
                refined.setdefault(bench, []).extend(new)
        return None


def _median(table, bench, size, algo):
    import numpy as np

    from mpiscope.store import samples

    values = samples.sample_values(table, bench, size, algo=algo).values
    return float(np.median(values)) if len(values) else float("nan")


def _measure(plan, engine, tmp, refined):
    """Every launch of the plan, then refinement; returns (status, error, commands)."""
    for note in plan.notes:
        sys.stderr.write(f"mpiscope: note: {note}\n")
    with progress(plan.series_count() * plan.launches) as shown:
        launches = _Launches(plan, engine, tmp, shown)
        failure = None
        try:
            for _ in range(plan.launches):
                failure = failure or launches.run()
            if plan.refine and not failure:
                failure = launches.refine(refined)
        except KeyboardInterrupt as exc:
            failure = f"interrupted ({exc.args[0] if exc.args else 'SIGINT'}): the launch was stopped"
        except OSError as exc:  # e.g. the output file system is full
            failure = (
                f"stopped: the output directory refused a write ({exc.strerror or exc}"
                f"{': ' + str(exc.filename) if exc.filename else ''})"
            )
    if plan.cluster:
        from mpiscope.cluster import delay_report

        report = delay_report(plan.cluster)
        if report and "cluster" in launches.extra_context:
            launches.extra_context["cluster"]["delay_program"] = report["summary"]
    launches.extra_context["timing"] = launches.timing
    if launches.failed_launch is not None:
        launches.extra_context["failed_launch"] = launches.failed_launch
    if launches.finalize_stopped:
        grace = launch.finalize_grace()
        launches.extra_context["finalize_stopped"] = {"launches": launches.finalize_stopped, "after_s": grace}
        sys.stderr.write(
            f"mpiscope: warning: launch {', '.join(map(str, launches.finalize_stopped))}: every "
            f"rank had stored its samples, but the MPI library did not return from MPI_Finalize "
            f"within {grace:.0f} s, so the launch was stopped and its samples kept (MPICH 4.0's "
            f"ch4:ucx can hang there: pmodels/mpich#6596; a newer MPICH does not)\n"
        )
    return ("failed" if failure else "completed"), failure, launches.commands, launches.extra_context


def launcher_output(run_dir, k, limit=STDERR_SHOWN):
    """What launch `k` wrote on stderr, whole up to `limit` characters; beyond,
    its beginning and end with a note."""
    path = Path(run_dir) / f"launch-{k}.stderr"
    text = path.read_text(errors="replace") if path.is_file() else ""
    if len(text) > limit:
        cut = len(text) - limit
        text = (
            text[: limit // 2] + f"\n[... {cut} characters left out; the whole output is in "
            f"{path} ...]\n" + text[-limit // 2 :]
        )
    return text


def _failure(launch_index, rc, stderr):
    """One line for the user: the launcher's explanation (the whole output is shown apart)."""
    return (
        f"launch {launch_index} exited with code {rc}: {explanation(stderr)} "
        f"(launcher output: launch-{launch_index}.stderr in the run directory)"
    )


class Stored(NamedTuple):
    """What storing a run computed, for its summary table without reading the
    run back: the samples table, every series' samples (all_series_samples)
    and their verdicts (None when the verdicts could not be made)."""

    table: object
    series: list | None
    verdicts: list | None


def _store_quality(run_dir, table, derived=None) -> Stored:
    """Every series' verdict (stats/quality.py), stored beside its samples;
    `derived`: the samples ingest derived (store.ingest), used where they
    cover every series."""
    from mpiscope.stats import quality
    from mpiscope.store import samples
    from mpiscope.store.run import Run
    from mpiscope.store.series import all_series_samples, series_keys

    run = Run.from_context(samples.table_context(table), run_dir)
    try:
        keys = series_keys(run)
        series = (
            [(*key, derived[key]) for key in keys]
            if derived and all(key in derived for key in keys)
            else all_series_samples(table, run)
        )
        verdicts = quality.run_verdicts(series, run)
        quality.save(run_dir, verdicts)
        return Stored(table, series, verdicts)
    except Exception as exc:  # noqa: BLE001 - the measurements must be stored whatever this hits
        # Readers compute missing verdicts themselves; losing the run would be worse.
        sys.stderr.write(
            f"mpiscope: warning: quality verdicts not stored ({exc!r}); they are computed when the run is read\n"
        )
        return Stored(table, None, None)


# What a run's context says until the run is stored: a run stopped before that
# (mpiscope killed, the disk full) is found failed, with its raw files.
UNFINISHED = (
    "the run did not finish: mpiscope was stopped, or could not store it; the raw "
    "files are kept (`mpiscope runs ingest RUN` stores what they hold)"
)


def _checkout_and_machine(engine):
    """(git_sha(), machine.describe(engine)), side by side: each mostly waits
    for its own processes (git, ldd) before the launch can start."""
    found = {}

    def read_sha():
        try:
            found["sha"] = git_sha()
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            found["error"] = exc

    thread = threading.Thread(target=read_sha, name="mpiscope-git", daemon=True)
    thread.start()
    try:
        described = machine.describe(engine)
    finally:
        thread.join()
    if "error" in found:
        raise found["error"]
    return found["sha"], described


def _base_context(plan, argv, run_id, started, mpi, engine):
    sha, described = _checkout_and_machine(engine)
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "label": plan.label,
        "created": datetime.datetime.fromtimestamp(started).isoformat(timespec="seconds"),
        "status": "failed",
        "error": UNFINISHED,
        "command": list(argv),
        "mpi": plan.launcher_family,
        "mpi_identity": {**mpi.identity(), "engine": str(engine)},
        "launcher": plan.launcher,
        "np": plan.np,
        "benches": plan.benches,
        "sizes": plan.sizes,
        "launches": plan.launches,
        "seed": plan.seed,
        "git_sha": sha,
        "plan": plan.stored(),
        "oversubscribed": plan.oversubscribe,
        "env": relevant_env(),
        "machine": described,
        # Who writes the run: a hidden run directory whose writer is gone was never stored.
        "writer": {"host": socket.gethostname(), "pid": os.getpid()},
    }


# The context written when a run starts is padded to this size (JSON allows the
# trailing blanks): on a disk that fills up, removing it makes room for the final one.
CONTEXT_RESERVE = 64 * 1024


def _write_context(run_dir, context, reserve=False):
    text = json.dumps(context, indent=2, default=str) + "\n"
    write_text(run_dir / "context.json", text + " " * max(0, CONTEXT_RESERVE - len(text)) if reserve else text)


def store_run(run_dir, context) -> Stored | None:
    """samples.parquet, quality.json and context.json of a run directory from its
    raw files; returns what it computed (None when not stored). A file system
    that refuses the writes (full) leaves the run failed, saying so, with its
    raw files: nothing half-written carries a final name."""
    from mpiscope.store import ingest as store, samples
    from mpiscope.store.trace import TRACE_FILE

    began = time.perf_counter()
    try:
        derived, verdicts = {}, []

        def judge(table):  # while ingest's last row groups are written
            context.setdefault("timing", {})["ingest_s"] = time.perf_counter() - began
            verdicts.append(_store_quality(run_dir, table, derived))

        table = store.ingest(run_dir, context, derived, meanwhile=judge)
        stored = verdicts[0]
        context["hosts"] = samples.table_context(table).get("hosts")  # for readers of the catalog
        context["timing"]["verdicts_s"] = time.perf_counter() - began - context["timing"]["ingest_s"]
        context["timing"]["stored_at"] = time.time()  # the wall clock once stored, but for this file
        _write_context(run_dir, context)
    except OSError as exc:
        for name in (store.SAMPLES_FILE, TRACE_FILE, QUALITY_FILE):
            (run_dir / name).unlink(missing_ok=True)  # space back; none of them is whole
        code = errno.ENOSPC if "errno 28" in str(exc) else exc.errno  # pyarrow's own OSError
        why = (describe(OSError(code, "")) if code else str(exc)) + (f" ({exc.filename})" if exc.filename else "")
        # What the measurement itself ended as, for `mpiscope runs ingest` to restore.
        context["measured"] = {"status": context.get("status"), "error": context.get("error")}
        context["status"] = "failed"
        context["error"] = ((context.get("error") + "; ") if context.get("error") else "") + (
            f"storing the run failed: {why}; its raw files are kept: once that is mended, "
            "`mpiscope runs ingest RUN` stores what they hold"
        )
        try:
            _write_context(run_dir, context)
        except OSError:
            # The padded context of the start makes room for this one.
            (run_dir / "context.json").unlink(missing_ok=True)
            _write_context(run_dir, context)
        return None
    return stored


@contextlib.contextmanager
def _collector_paused():
    """The cyclic garbage collector off while a run is stored: what storing
    allocates is freed by reference counts but for a few cycles, and the
    collector's passes over it would cost the time after the last measurement."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def reingest(run_dir):
    """Stores a run again from its raw files (`mpiscope runs ingest`): one whose
    store failed, whose samples.parquet is damaged, or that mpiscope left
    unfinished (a hidden .<run_id>.partial, which gets its final name). Returns
    (run directory, context)."""
    run_dir = Path(run_dir)
    from mpiscope.store import ingest as store

    context = read_json(run_dir / "context.json", hint="ingest needs the run's context")
    if not (run_dir / "raw").is_dir():
        raise UsageError(f"{run_dir} has no raw/ directory: there is nothing to ingest")
    measured = context.pop("measured", None)
    if measured:
        context.update(measured)
    elif context.get("error") == UNFINISHED:
        context["error"] = (
            "mpiscope stopped before storing the run; `mpiscope runs ingest` stored what its raw files held"
        )
    for key in store.INGEST_KEYS:
        context.pop(key, None)
    if not store_run(run_dir, context):
        raise UsageError(f"{run_dir}: {context['error']}")
    name = run_dir.name
    if name.startswith(".") and name.endswith(".partial"):
        final = run_dir.with_name(name[1 : -len(".partial")])
        os.rename(run_dir, final)
        run_dir = final
    _record(run_dir.parent, run_dir, context)
    return run_dir, context


def _record(out, run_dir, context):
    """A stored-again run in the catalog; the catalog is an index the next
    listing refreshes, so a failure here costs nothing stored."""
    from mpiscope.store import catalog

    try:
        catalog.record(out, run_dir, context)
    except Exception as exc:  # noqa: BLE001 - the run is stored; the index can wait
        sys.stderr.write(
            f"mpiscope: warning: the catalog was not updated ({exc}); the next `mpiscope runs` adds the run\n"
        )


def _preload(names):
    """Imports the modules `names` in a thread; returns the thread. A module
    that fails here is left to the import that needs it, which says why."""

    def load():
        for name in names:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001, S110 - the import that needs it reports the error
                pass

    thread = threading.Thread(target=load, name="mpiscope-preload", daemon=True)
    thread.start()
    return thread


def run(plan, argv):
    """Measures `plan`; returns (run directory, context)."""
    return measure(plan, argv)[:2]


def measure(plan, argv, preload=()):
    """Measures `plan`; returns (run directory, context, what storing it
    computed: a Stored, or None when the run could not be stored). The
    modules `preload` names, which the caller needs once the run is stored,
    are imported with those storing needs while the run is prepared and
    launched. The catalog
    is not touched: its next reader finds the new run directory."""
    loading = _preload((*STORE_MODULES, *preload))
    try:
        return _measure_and_store(plan, argv)
    finally:
        loading.join()  # an import cut short at the interpreter's exit could crash it


def _measure_and_store(plan, argv):
    began = time.perf_counter()
    mpi = plan.installation()
    engine = ensure_engine(mpi)
    build_check_s = time.perf_counter() - began
    try:
        plan.out.mkdir(parents=True, exist_ok=True)
        run_id = new_run_id()
        tmp = plan.out / f".{run_id}.partial"
        tmp.mkdir()
    except OSError as exc:
        why = exc.strerror or exc
        raise UsageError(
            f"--out {plan.out}: cannot create a run directory there ({why}); give a directory you can write to"
        ) from None
    processes.adopt_orphans()
    started = time.time()
    context = _base_context(plan, argv, run_id, started, mpi, engine)
    refined = {}
    with signals_stop_the_run() as signals:
        try:
            _write_context(tmp, context, reserve=True)
            status, error, commands, extra_context = _measure(plan, engine, tmp, refined)
        except UsageError:  # the engine refused the request: bad input leaves nothing
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        except OSError as exc:  # the output root refused the first write: nothing ran
            shutil.rmtree(tmp, ignore_errors=True)
            raise UsageError(
                f"--out {plan.out}: cannot write there: {describe(exc) if exc.errno is not None else exc}"
            ) from None
        signals.storing = True
        context.update(
            {
                "duration_s": round(time.time() - started, 3),
                "status": status,
                "error": error,
                "launch_commands": [list(map(str, c)) for c in commands],
                "refined_sizes": refined,
                **extra_context,
            }
        )
        context["timing"]["build_check_s"] = build_check_s
        context["env"] = context.pop("env")  # last, as before
        with _collector_paused():
            stored = store_run(tmp, context)
        final = plan.out / run_id
        os.rename(tmp, final)
    return final, context, stored
