# SPDX-License-Identifier: BSD-3-Clause
"""Several users of one output root at once: two runs, a profile and a tune
write into it while listings, `show latest` and reports read it. Every
command succeeds (a reader that finds no run yet says so, exit 2); afterwards
the catalog lists every run exactly once, complete, agreeing with the
directories, and nothing half-written is left in the root."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import duckdb

from known_traffic import launch
from mpiscope.engine.mpi import find_mpi
from mpiscope.profile.build import ensure_library

RUN = ["run", "-n", "2", "--sizes", "8", "--reps-max", "30", "--ci-width", "0",
       "--time-budget", "0.2", "--sync", "barrier", "--json"]
# MPICH: the tuner measures only (Open MPI's would also read every cell under gdb)
TUNE = ["tune", "-n", "2", "--mpi", "mpich", "--coll", "barrier", "--sizes", "8",
        "--time-budget", "0.05", "--reps-max", "50", "--repeat", "1", "--verify-repeat", "1", "--json"]
NO_RUN_YET = "no runs under"


def _start(args, env):
    return subprocess.Popen([sys.executable, "-m", "mpiscope.cli", *map(str, args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _cli(args, env):
    return subprocess.run([sys.executable, "-m", "mpiscope.cli", *map(str, args)], env=env,
                          capture_output=True, text=True, timeout=300)


def _listed(out, env):
    """{run id: status} as `mpiscope runs` prints them, and the ids in print order."""
    p = _cli(["runs", "--out", out], env)
    assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
    rows = [line.split() for line in p.stdout.splitlines()[1:] if line.strip()]
    return {r[0]: r[2] for r in rows}, [r[0] for r in rows]


def test_two_runs_a_profile_a_tune_and_readers_share_one_root(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("MPISCOPE_OUT", "MPISCOPE_CONFIG", "MPISCOPE_PROGRESS")}
    env["XDG_CONFIG_HOME"] = str(tmp_path / "xdg")
    out = tmp_path / "runs"
    out.mkdir()
    program = ensure_library(find_mpi(mpi="openmpi"), "tests") / "null-calls"
    writers = {
        "run a": _start([*RUN, "--bench", "pingpong", "--label", "a", "--out", out], env),
        "run b": _start([*RUN, "--bench", "allreduce", "--label", "b", "--out", out], env),
        "profile": _start(["profile", "--out", out, "--mpi", "openmpi", "--json", "--",
                           *launch("openmpi", program, 2), "1000"], env),
        "tune": _start([*TUNE, "-o", out / "tune"], env),
    }
    readers = [["runs", "--out", out], ["show", "latest", "--out", out],
               ["report", "-o", tmp_path / "report.html", "--jobs", "0", "--out", out]]
    seen, wrong = 0, []
    deadline = time.monotonic() + 600
    while any(p.poll() is None for p in writers.values()) and time.monotonic() < deadline:
        for args in readers:
            p = _cli(args, env)
            seen += 1
            errors = [line for line in p.stderr.splitlines() if line.startswith("mpiscope: error:")]
            refused_cleanly = p.returncode == 2 and len(errors) == 1 and NO_RUN_YET in errors[0]
            if "Traceback" in p.stderr or not (p.returncode == 0 or refused_cleanly):
                wrong.append(f"{' '.join(map(str, args[:2]))} -> {p.returncode}\n{p.stderr[-2000:]}")
    results = {name: (p.wait(timeout=600), *p.communicate()) for name, p in writers.items()}
    for name, (code, stdout, stderr) in results.items():
        assert code == 0 and "Traceback" not in stderr, f"{name}: exit {code}\n{stderr[-3000:]}"
    assert seen >= len(readers) and not wrong, "\n\n".join(wrong)

    ids = {Path(json.loads(results[n][1])["run_dir"]).name for n in ("run a", "run b")}
    ids.add(json.loads(results["profile"][1])["run_id"])
    # every run listed once, completed; the catalog agrees with the directories
    status, order = _listed(out, env)
    assert sorted(order) == sorted(ids) and set(status.values()) == {"completed"}, status
    con = duckdb.connect(str(out / "catalog.duckdb"), read_only=True)
    try:
        stored = con.execute("SELECT run_id, status, path FROM runs").fetchall()
    finally:
        con.close()
    assert sorted(r[0] for r in stored) == sorted(ids) and {r[1] for r in stored} == {"completed"}
    assert all(Path(path) == (out / rid).resolve() for rid, _, path in stored)
    runs_here = {p.name for p in out.iterdir() if p.is_dir() and (p / "context.json").exists()}
    assert runs_here == ids
    # nothing half-written: no hidden run directories, no temporary files
    assert {p.name for p in out.iterdir() if p.name.startswith(".")} == {".catalog.lock"}
    assert not [p for p in out.rglob("*") if ".tmp" in p.name or p.name.endswith((".partial", ".removing"))]
    for rid in sorted(ids):
        p = _cli(["show", rid, "--out", out], env)
        assert p.returncode == 0 and "Traceback" not in p.stderr, f"show {rid}: {p.stderr[-2000:]}"
    assert not [p for rid in ids for p in (out / rid).rglob("*.part")]
    # the tune's own runs: each stored once, beside its decisions; a failed one
    # is an algorithm the library refused when forced (its ranks' raw files stay .part)
    assert (out / "tune" / "tune.json").exists()
    tune_runs = out / "tune" / "runs"
    tune_status, tune_order = _listed(tune_runs, env)
    assert sorted(tune_order) == sorted(p.name for p in tune_runs.iterdir() if not p.name.startswith(".")
                                        and p.is_dir())
    assert "completed" in tune_status.values() and set(tune_status.values()) <= {"completed", "failed"}
    assert {p.name for p in tune_runs.iterdir() if p.name.startswith(".")} == {".catalog.lock"}
    assert {p.parents[2].name for p in tune_runs.rglob("*.part")} <= \
        {rid for rid, st in tune_status.items() if st == "failed"}
