# SPDX-License-Identifier: BSD-3-Clause
"""Damaged runs: for each kind of run and each file in its directory (every
Parquet file, JSON document and raw file) and the catalog, the file is cut
short, filled with garbage, or deleted; then the commands that read that
kind of run run on it (each damage and each command at least once per file). Each exits 2 with one `mpiscope: error:` line naming
the damaged file (and `mpiscope runs ingest` where raw files can rebuild it),
or succeeds (exit 0) when the file is not needed for its answer or the answer
is marked partial; never a traceback, never another exit code.

Runs are built by the test generators (no MPI): a measurement
(analysis_runs.build_run), a traced measurement and one of two launches
(rawgen, trace blocks as the engine writes them), a profile and a traced
profile (profilegen), an app run whose launches are of several
configurations, warm-up and counted, one failed (app.store), a tune's output
directory (tests/data/tune-replay), a measurement with the peers' methods
(methods_data.methods_run). Commands run in this process. `mpiscope sim`
stores no runs: the simulations it runs read runs (the traced profile's `sim
schedule --from-trace` here).

The files a run or a tune writes as JSON or beside the samples (the methods
table, the method descriptions in samples.parquet, an app run's context.json,
app.json and launches.parquet, tune.json) also take what a file system or a
hostile hand can put there (HOSTILE): an empty file, another file of the run
in its place, a directory, a FIFO, an unreadable file, JSON nested 100,000
deep, a number made NaN, infinite, negative or huge, a context of another
kind; each damage meets one of the commands, and each command every file.
The same verdicts hold, within a time limit per case (a FIFO must not hang a
command), and what a command prints on success holds no NaN or infinity as a
result.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import struct
import tempfile
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pytest

from analysis_runs import build_run
from mpiscope.app.answer import summarize
from mpiscope.app.launch import Launch
from mpiscope.app.app_run import Writer
from mpiscope.cli.main import main
from mpiscope.stats.rto import across_hosts, rto_min
from methods_data import methods_run
from permissions import permissions_apply
from profilegen import write_profile
from rawgen import PERIOD, T0, RunBuilder, SeriesSpec, context_for

DAMAGES = ("truncate", "garbage", "delete")
TUNE_DATA = Path(__file__).resolve().parents[1] / "data" / "tune-replay" / "expected" / "openmpi-adaptive"

PROFILE_CELLS = {r: [("MPI_Send", 2, "node", 10, 4, 4096, 0.001), ("MPI_Recv", 2, "node", 10, 4, 4096, 0.002),
                     ("MPI_Allreduce", 2, "node", 3, 8, 64, 0.003)] for r in range(2)}
TRACE = {0: [("MPI_Send", 0.001, 0.002, 4096, 1, 2, 0), ("MPI_Allreduce", 0.003, 0.004, 8, -1, 2, 0)],
         1: [("MPI_Recv", 0.001, 0.0025, 4096, 0, 2, 0), ("MPI_Allreduce", 0.003, 0.004, 8, -1, 2, 0)]}


# RTO_min as a run records it from its hosts (read here from no host: no process is started)
RTO = across_hosts({"node0": rto_min(ip_route_text="", sysctl_text="", read_system=False)})


def _with_rto(run_dir):
    cj = run_dir / "context.json"
    cj.write_text(json.dumps({**json.loads(cj.read_text()), "rto_min": RTO}, indent=2))
    return run_dir


def _measurement(root):
    return _with_rto(build_run(root, "20240101-000000-aaaa", "2024-01-01T00:00:00+00:00",
                               benches=("pingpong",), sizes=[64, 4096], reps=9))


TRACE_COLUMNS = [["rep", "i32"], ["seq", "i32"], ["op", "u8"], ["peer", "i32"], ["tag", "i32"],
                 ["bytes", "i64"], ["t_post", "f64"], ["t_done", "f64"]]
TRACE_TYPES = {"i32": "<i4", "i64": "<i8", "u8": "u1", "f64": "<f8"}


def _trace_block(rank, reps, size):
    """A trace block (docs/reference/formats/raw-files.md) of a 2-rank ring
    allgather: each repetition, a receive from and a send to the other rank."""
    rows = [(rep, seq, op, 1 - rank, 0, size, T0 + rep * PERIOD + seq * 1e-6, T0 + rep * PERIOD + 4e-6)
            for rep in range(reps) for seq, op in enumerate((1, 0))]
    meta = {"kind": "trace", "bench": "allgather", "algo": "ring", "size": size, "launch": 0, "rank": rank,
            "reps": reps, "reps_traced": reps, "dropped": 0, "columns": TRACE_COLUMNS}
    js = json.dumps(meta).encode()
    payload = b"".join(np.asarray([r[i] for r in rows], dtype=TRACE_TYPES[t]).tobytes()
                       for i, (_, t) in enumerate(TRACE_COLUMNS))
    return b"BLOCK___" + struct.pack("<I", len(js)) + js + struct.pack("<Q", len(rows)) + payload + b"ENDBLOCK"


def _rawgen_run(root, run_id, specs, launches=(0,), trace_reps=0):
    """A 2-rank run of `specs` (rawgen), its raw files holding trace blocks
    when `trace_reps`, stored by ingest with context.json as the runner writes it."""
    from mpiscope.store.ingest import ingest

    rb = RunBuilder(root / run_id, nranks=2, launches=launches)
    for spec in specs:
        rb.add(spec)
    rb.write()
    for rank in range(2) if trace_reps else ():
        raw = rb.run_dir / "raw" / "launch-0" / f"rank-{rank}.raw"
        raw.write_bytes(raw.read_bytes() + _trace_block(rank, trace_reps, specs[0].size))
    context = context_for(run_id=run_id, created=f"{run_id[:4]}-{run_id[4:6]}-{run_id[6:8]}T00:00:00+00:00",
                          benches=sorted({s.bench for s in specs}), sizes=sorted({s.size for s in specs}),
                          launches=len(launches), rto_min=RTO, plan={"trace": bool(trace_reps)})
    (rb.run_dir / "context.json").write_text(json.dumps(context, indent=2))
    ingest(rb.run_dir, context)
    return rb.run_dir


US = 1e-6


def _traced_measurement(root):
    return _rawgen_run(root, "20240104-000000-trcm", [SeriesSpec("allgather", 64, [3 * US, 3.2 * US, 3.1 * US, 3.3 * US],
                                                                 algo="ring")], trace_reps=4)


def _launches(root):
    both = (0, 1)
    return _rawgen_run(root, "20240105-000000-lnch",
                       [SeriesSpec("pingpong", 8, [1 * US, 1.1 * US, 0.9 * US, 1.2 * US], launches=both)],
                       launches=both)


def _app(root):
    """An app run: a default and an environment configuration, a warm-up round
    and counted ones, one launch failed."""
    configs = [{"name": "default", "kind": "default", "source": "default", "env": {}},
               {"name": "eager", "kind": "env", "source": "OMPI_MCA_btl_sm_eager_limit=8192",
                "env": {"OMPI_MCA_btl_sm_eager_limit": "8192"}}]
    options = {"noise": 0.02, "alpha": 0.05, "level": 0.95, "seed": 1, "n_boot": 200}
    context = {"run_id": "20240106-000000-app0", "label": None, "command": ["mpiscope", "app", "compare"],
               "launch_command": ["mpirun", "-n", "2", "./app"], "application": ["./app"], "mpi": "openmpi",
               "np": 2, "configs": configs, "baseline": "default",
               "value": {"metric": None, "what": "wall time of the launch", "lower_is_better": True},
               "options": {**options, "warmup": 1}, "seed": 1}
    writer = Writer(root, context)
    for k, (rnd, name) in enumerate((r, n) for r in range(5) for n in ("default", "eager")):
        failed = (rnd, name) == (4, "eager")
        writer.add(Launch(k, name, max(rnd, 1), rnd == 0, "2024-01-06T00:00:00",
                          (2.0 if name == "default" else 1.8) + 0.01 * (rnd % 3), 1 if failed else 0, None,
                          "failed" if failed else "ok", "exit code 1: a rank stopped" if failed else None, ""))
    answer = {**summarize(writer.launches, ["default", "eager"], "default", options, False), "stop": "ci"}
    return writer.finish(answer, status="completed", error=None, stop="ci", duration_s=1.0)


def _profile(root, traced=False):
    name = "20240102-000000-prof" if not traced else "20240103-000000-trac"
    return write_profile(root / name, 2, 0.01, PROFILE_CELLS, TRACE if traced else None,
                         {0: [[0, 1]], 1: [[0, 1]]} if traced else None, run_id=name)


def _tune(root):
    out = root.parent / "tune"
    shutil.copytree(TUNE_DATA, out)
    return out


def _methods(root):
    return methods_run(root / "20240107-000000-meth", run_id="20240107-000000-meth")


# (kind, builder, commands: each a list of words; RUN stands for the run, OUT for a new file)
KINDS = {
    "measurement": (_measurement, [["show", "RUN"], ["show", "RUN", "--json"], ["export", "RUN", "--format", "csv"],
                                   ["export", "RUN", "--format", "json"], ["fit", "RUN", "--resamples", "20"],
                                   ["compare", "RUN", "RUN", "--resamples", "20"],
                                   ["report", "RUN", "-o", "OUT", "--jobs", "0"], ["runs"]]),
    "traced measurement": (_traced_measurement, [
        ["show", "RUN"], ["export", "RUN", "--format", "csv"], ["report", "RUN", "-o", "OUT", "--jobs", "0"],
        ["timechart", "RUN", "--bench", "allgather", "--algo", "ring", "--size", "64", "-o", "OUT.svg"]]),
    "several launches": (_launches, [["show", "RUN"], ["show", "RUN", "--json"],
                                     ["compare", "RUN", "RUN", "--resamples", "20"],
                                     ["report", "RUN", "-o", "OUT", "--jobs", "0"]]),
    "app": (_app, [["show", "RUN"], ["show", "RUN", "--json"], ["report", "RUN", "-o", "OUT"], ["runs"]]),
    "profile": (_profile, [["show", "RUN"], ["show", "RUN", "--json"], ["profile", "weights", "RUN"],
                           ["report", "RUN", "-o", "OUT"]]),
    "traced profile": (lambda root: _profile(root, traced=True),
                       [["show", "RUN"], ["profile", "weights", "RUN"], ["export", "RUN", "--format", "otf2", "-o", "OUT"],
                        ["sim", "schedule", "--from-trace", "RUN", "-o", "OUT"]]),
    "tune": (_tune, [["report", "RUN", "-o", "OUT"]]),
    "methods": (_methods, [["methods", "RUN"], ["methods", "RUN", "--json"], ["show", "RUN"],
                           ["report", "RUN", "-o", "OUT", "--jobs", "0"]]),
}


def _damage(path: Path, how: str):
    if how == "delete":
        path.unlink()
    elif how == "truncate":
        data = path.read_bytes()
        path.write_bytes(data[:len(data) // 2])
    else:
        path.write_bytes(b"\x00garbage\xff" * max(1, path.stat().st_size // 10))


def _files(run_dir: Path, root: Path):
    """Every file of the run, and the catalog of its output root."""
    files = sorted(p for p in run_dir.rglob("*") if p.is_file())
    catalog = root / "catalog.duckdb"
    return files + ([catalog] if catalog.exists() and root in run_dir.parents else [])


# A profile's trace tables are optional: without them the run is one without a
# trace, and a command that needs one says so (and how to get one).
TRACE_TABLES = ("profile_trace.parquet", "profile_comms.parquet")


def _no_trace(target, how, error):
    return how == "delete" and target.name in TRACE_TABLES and "no trace" in error


def _call(argv):
    err, out = io.StringIO(), io.StringIO()
    with redirect_stderr(err), redirect_stdout(out):
        try:
            code = main(argv)
        except SystemExit as e:
            code = e.code
        except Exception:  # what the user would see as a traceback
            import traceback

            return None, out.getvalue(), err.getvalue() + traceback.format_exc()
    return code, out.getvalue(), err.getvalue()


def _pristine(kind, base: Path):
    """(output root, run directory) of a new run of `kind` under `base`;
    each case works on a copy of it."""
    from mpiscope.store import catalog

    root = base / kind.replace(" ", "-") / "runs"
    root.mkdir(parents=True)
    run_dir = Path(KINDS[kind][0](root))
    catalog.list_runs(root)  # the catalog exists, as after any command
    return root, run_dir


def _pairs(damages, commands, turn):
    """Each damage and each command at least once, paired differently for
    each file (`turn`), so that every damage meets every command across the
    files without running every file x damage x command."""
    for k in range(max(len(damages), len(commands))):
        yield damages[k % len(damages)], commands[(k + turn) % len(commands)]


def _matrix(kind, root, run_dir):
    for n, f in enumerate(_files(run_dir, root)):
        for how, words in _pairs(DAMAGES, KINDS[kind][1], n):
            yield f, how, words


@pytest.mark.parametrize("kind", KINDS)
def test_every_damaged_file_is_named_or_read_cleanly(kind, tmp_path, monkeypatch, capsys):
    for key in ("MPISCOPE_OUT", "MPISCOPE_CONFIG", "MPISCOPE_PROGRESS"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(tmp_path)
    results = {"named": 0, "read": 0}
    bad = []
    root, run_dir = _pristine(kind, tmp_path / "pristine")
    for n, (f, how, words) in enumerate(_matrix(kind, root, run_dir)):
        case = tmp_path / f"c{n}"
        shutil.copytree(root.parent, case)
        croot = case / root.name
        crun = case / run_dir.relative_to(root.parent)
        target = case / f.relative_to(root.parent)
        _damage(target, how)
        argv = [w.replace("RUN", str(crun)).replace("OUT", str(case / "out-file")) for w in words]
        argv += ["--out", str(croot)]
        code, out, err = _call(argv)
        errors = [line for line in err.splitlines() if line.startswith("mpiscope: error:")]
        where = f"{kind}: {how} {target.relative_to(case)}: {' '.join(words)} -> {code}\n{err[-800:]}"
        if "Traceback" in err or code not in (0, 2):
            bad.append(where)
        elif code == 2 and not (len(errors) == 1 and (target.name in errors[0] or
                                                       _no_trace(target, how, errors[0]))):
            bad.append(where)
        else:
            results["named" if code == 2 else "read"] += 1
        shutil.rmtree(case)
    _tally(capsys, f"damaged {kind} runs", results, bad)


def _tally(capsys, what, counts, bad):
    """Prints the matrix's counts and fails with the first wrong cases."""
    total = counts["named"] + counts["read"] + len(bad)
    with capsys.disabled():
        print(f"\n{what}: {total} cases (file x damage x command): {counts['named']} refused "
              f"naming the file, {counts['read']} read cleanly, {len(bad)} wrong")
    assert not bad, "\n\n".join(bad[:20]) + f"\n\n({len(bad)} wrong of {total})"


# ---------------------------------------------------------------- what a file system or a hostile hand puts there

HOSTILE_FILES = {"methods": ("methods.parquet", "samples.parquet", "context.json"),
                 "app": ("context.json", "app.json", "launches.parquet"),
                 "tune": ("tune.json",),
                 "traced measurement": ("trace.parquet",),
                 "traced profile": ("profile_trace.parquet",),
                 "profile": ("context.json",),
                 "measurement": ("context.json", "samples.parquet")}
CASE_SECONDS = 60  # a command still running after this is hanging (on a FIFO, say)
NUMBERS = {"NaN": "NaN", "infinite": "1e999", "negative": "-1", "huge": "1e300"}
PARQUET_NUMBERS = {"NaN": float("nan"), "infinite": float("inf"), "negative": -1, "huge": None}  # None: the type's largest
# The columns of a Parquet file whose values a case damages (one row each).
PARQUET_COLUMNS = {"methods.parquet": ("size", "rank", "phase", "calls", "t_start_local", "t_end_local", "t_end"),
                   "trace.parquet": ("rank", "bytes", "t_post", "t_done")}  # others: every numeric column
KINDS_OF_RUN = ("measurement", "profile", "app")
RESULT_WORDS = re.compile(r"(?<![\w.])-?(nan|inf|infinity)(?![\w.])", re.IGNORECASE)


def _write_parquet_copy(path, table):
    import pyarrow.parquet as pq

    pq.write_table(table, path)


def _parquet_value_damages(path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    names = PARQUET_COLUMNS.get(path.name) or [f.name for f in table.schema
                                               if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)]
    for name in names:
        i = table.schema.get_field_index(name)
        field = table.schema.field(i)
        for what, value in PARQUET_NUMBERS.items():
            integer = pa.types.is_integer(field.type)
            if integer and isinstance(value, float) or pa.types.is_unsigned_integer(field.type) and value == -1:
                continue
            if value is None:
                value = int(np.iinfo(field.type.to_pandas_dtype()).max) if integer else 1e300
            values = table[name].to_pylist()
            values[min(1, len(values) - 1)] = value

            def damage(target, t=table, i=i, field=field, values=values):
                _write_parquet_copy(target, t.set_column(i, field, pa.array(values, type=field.type)))
            yield f"{what} {name}", damage


def _numeric_paths(doc, at=()):
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _numeric_paths(v, (*at, k))
    elif isinstance(doc, list):
        for k, v in enumerate(doc):
            yield from _numeric_paths(v, (*at, k))
    elif isinstance(doc, (int, float)) and not isinstance(doc, bool):
        yield at


def _with_marker(doc, path):
    """A copy of `doc` with the number at `path` replaced by a marker string."""
    if not path:
        return "@@damage@@"
    out = dict(doc) if isinstance(doc, dict) else list(doc)
    out[path[0]] = _with_marker(doc[path[0]], path[1:])
    return out


def _json_value_damages(path, spread=5):
    doc = json.loads(path.read_text())
    paths = list(_numeric_paths(doc))
    chosen = [paths[round(k * (len(paths) - 1) / max(spread - 1, 1))] for k in range(min(spread, len(paths)))]
    for at in dict.fromkeys(chosen):
        for what, literal in NUMBERS.items():
            text = json.dumps(_with_marker(doc, at), indent=1).replace('"@@damage@@"', literal)
            yield f"{what} {'.'.join(map(str, at))}", lambda target, text=text: target.write_text(text)
    if path.name == "context.json":
        for kind in KINDS_OF_RUN:
            if kind != doc.get("kind", "measurement"):
                text = json.dumps({**doc, "kind": kind})
                yield f"kind {kind}", lambda target, text=text: target.write_text(text)


def _method_description_damages():
    """Damages of the method descriptions ingest keeps in samples.parquet's metadata."""
    def edit(change):
        def damage(target):
            import pyarrow.parquet as pq

            table = pq.read_table(target)
            meta = dict(table.schema.metadata)
            ctx = json.loads(meta[b"mpiscope.context"])
            change(ctx)
            meta[b"mpiscope.context"] = json.dumps(ctx).encode()
            _write_parquet_copy(target, table.replace_schema_metadata(meta))
        return damage

    yield "descriptions a string", edit(lambda c: c.__setitem__("methods", "osu"))
    yield "a description a string", edit(lambda c: c["methods"].__setitem__(0, "osu"))
    for key in ("method", "bench", "size"):
        yield f"a description without {key}", edit(lambda c, key=key: c["methods"][0].pop(key))
    for what, value in (("negative", -1), ("huge", 2**64), ("fractional", 0.5)):
        yield f"a description's size {what}", edit(lambda c, value=value: c["methods"][0].__setitem__("size", value))


def _replace_with_dir(target):
    target.unlink()
    target.mkdir()


def _replace_with_fifo(target):
    target.unlink()
    os.mkfifo(target)


def _another_file(target):
    if target.suffix == ".parquet":
        import pyarrow as pa

        _write_parquet_copy(target, pa.table({"x": [1, 2]}))
    else:
        others = sorted(p for p in target.parent.glob("*.json") if p.name != target.name)
        target.write_text(others[0].read_text() if others else '["another", "document"]')


def _hostile(target):
    """(name, damage) of every hostile damage of `target`."""
    yield "empty", lambda t: t.write_bytes(b"")
    yield "another file", _another_file
    yield "a directory", _replace_with_dir
    yield "a FIFO", _replace_with_fifo
    yield "unreadable", lambda t: t.chmod(0)
    if target.suffix == ".json":
        yield "nested 100,000 deep", lambda t: t.write_text("[" * 100_000 + "]" * 100_000)
        yield from _json_value_damages(target)
    else:
        yield from _parquet_value_damages(target)


def _hostile_matrix(kind, run_dir):
    for n, name in enumerate(HOSTILE_FILES[kind]):
        target = run_dir / name
        damages = _method_description_damages() if kind == "methods" and name == "samples.parquet" \
            else _hostile(target)
        for (how, damage), words in _pairs(list(damages), KINDS[kind][1], n):
            yield target, how, damage, words


class _Hang(Exception):
    pass


@contextmanager
def _time_limit(seconds):
    def stop(*_):
        raise _Hang()
    old = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def _verdict(code, out, err, target, how, run_dir):
    """None when the case ended as it must, else what went wrong."""
    errors = [line for line in err.splitlines() if line.startswith("mpiscope: error:")]
    if code is None or "Traceback" in err:
        return "a traceback"
    if code not in (0, 2):
        return f"exit code {code}"
    if code == 2:
        named = target.name in errors[0] if len(errors) == 1 else False
        if how.startswith("kind "):  # the context says another kind: the run is named
            named = len(errors) == 1 and run_dir.name in errors[0]
        return None if named else "not one error naming the file"
    words = RESULT_WORDS.findall(out)
    return f"printed {words[0]!r} as a result" if words else None


@pytest.mark.parametrize("kind", HOSTILE_FILES)
def test_hostile_files_are_named_or_read_cleanly(kind, tmp_path, monkeypatch, capsys):
    base = Path(tempfile.mkdtemp(dir="/tmp", prefix="mpiscope-hostile-"))
    try:
        for key in ("MPISCOPE_OUT", "MPISCOPE_CONFIG", "MPISCOPE_PROGRESS"):
            monkeypatch.delenv(key, raising=False)
        monkeypatch.setenv("XDG_CONFIG_HOME", str(base / "xdg"))
        monkeypatch.chdir(base)
        root, run_dir = _pristine(kind, base / "pristine")
        counts, bad = {"named": 0, "read": 0}, []
        for n, (f, how, damage, words) in enumerate(_hostile_matrix(kind, run_dir)):
            case = base / f"c{n}"
            shutil.copytree(root.parent, case)
            croot, crun = case / root.name, case / run_dir.relative_to(root.parent)
            target = case / f.relative_to(root.parent)
            damage(target)
            argv = [w.replace("RUN", str(crun)).replace("OUT", str(case / "out-file")) for w in words]
            argv += ["--out", str(croot)]
            try:
                with _time_limit(CASE_SECONDS):
                    if how == "unreadable":
                        with permissions_apply():
                            code, out, err = _call(argv)
                    else:
                        code, out, err = _call(argv)
            except _Hang:
                code, out, err = None, "", f"still running after {CASE_SECONDS} s (a hang)"
            wrong = _verdict(code, out, err, target, how, crun) if code is not None or "hang" not in err else "a hang"
            if wrong:
                bad.append(f"{kind}: {how} {target.relative_to(case)}: {' '.join(words)} -> {code}: {wrong}\n"
                           f"{err[-600:]}{out[-300:] if wrong.startswith('printed') else ''}")
            else:
                counts["named" if code == 2 else "read"] += 1
            shutil.rmtree(case)
        _tally(capsys, f"hostile {kind} files", counts, bad)
    finally:
        shutil.rmtree(base, ignore_errors=True)
