# SPDX-License-Identifier: BSD-3-Clause
"""Damaged runs: for each kind of run and each file in its directory (every
Parquet file, JSON document and raw file) and the catalog, the file is cut
short, filled with garbage, or deleted; then every command that reads that
kind of run runs on it. Each exits 2 with one `mpiscope: error:` line naming
the damaged file (and `mpiscope runs ingest` where raw files can rebuild it),
or succeeds (exit 0) when the file is not needed for its answer or the answer
is marked partial; never a traceback, never another exit code.

Runs are built by the test generators (no MPI): a measurement
(analysis_runs.build_run), a traced measurement and one of two launches
(rawgen, trace blocks as the engine writes them), a profile and a traced
profile (profilegen), an app run whose launches are of several
configurations, warm-up and counted, one failed (app.store), a tune's output
directory (tests/data/tune-replay). Commands run in this process. `mpiscope
sim` stores no runs: the simulations it runs read runs (the traced profile's
`sim schedule --from-trace` here).
"""

from __future__ import annotations

import io
import json
import shutil
import struct
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pytest

from analysis_runs import build_run
from mpiscope.app.answer import summarize
from mpiscope.app.launch import Launch
from mpiscope.app.store import Writer
from mpiscope.cli.main import main
from mpiscope.stats.rto import across_hosts, rto_min
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


def _matrix(kind, root, run_dir):
    for f in _files(run_dir, root):
        for how in DAMAGES:
            for words in KINDS[kind][1]:
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
    total = results["named"] + results["read"] + len(bad)
    with capsys.disabled():
        print(f"\ndamaged {kind} runs: {total} cases (file x damage x command): {results['named']} refused "
              f"naming the file, {results['read']} read cleanly, {len(bad)} wrong")
    assert not bad, "\n\n".join(bad[:20]) + f"\n\n({len(bad)} wrong of {total})"
