# SPDX-License-Identifier: BSD-3-Clause
"""The run catalog (store/catalog.py) shared with other processes: a catalog
another process holds locked is scanned around, and `mpiscope runs`
listings, lookups and runs finishing in several processes at once leave
every process successful and the catalog holding every run."""

import subprocess
import sys
import textwrap

import pytest

from mpiscope.store import catalog
from catalog_runs import stored_ids, three_runs


@pytest.fixture
def out(tmp_path):
    return three_runs(tmp_path / "runs")


def test_locked_catalog_falls_back_to_scanning(out):
    catalog.list_runs(out)  # create the database
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import duckdb, sys, time
        con = duckdb.connect({str(out / 'catalog.duckdb')!r})
        print("locked", flush=True)
        sys.stdin.readline()
    """)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        runs = catalog.list_runs(out)
        assert [r["run_id"] for r in runs][-1] == "20240302-100000-cccc"
        assert catalog.resolve(out, "latest").name == "20240302-100000-cccc"
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)


WRITER = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from mpiscope.store import catalog
    out, first = Path(sys.argv[1]), int(sys.argv[2])
    for i in range(first, first + 6):   # runs finishing, as the runner records them
        run_id = f"20240401-0000{i:02d}-ffff"
        run = out / run_id
        run.mkdir()
        ctx = {"schema_version": 1, "run_id": run_id, "created": f"2024-04-01T00:00:{i:02d}",
               "status": "completed", "mpi": "openmpi", "np": 2, "benches": ["pingpong"]}
        (run / "context.json").write_text(json.dumps(ctx))
        catalog.record(out, run, ctx)
""")


def test_concurrent_runs_listings_and_runs_finishing_are_safe(out):
    """4 `mpiscope runs` and 2 `show`-style resolutions at once while two processes
    record runs finishing, three times over: every process succeeds, none prints
    a traceback, and the catalog ends holding every run."""
    cli = [sys.executable, "-m", "mpiscope.cli"]
    for round_ in range(3):
        procs = [subprocess.Popen([*cli, "runs", "--out", str(out)], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for _ in range(4)]
        procs += [subprocess.Popen([*cli, "runs", "rm", "nosuch", "--out", str(out)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)]
        procs += [subprocess.Popen([sys.executable, "-c", WRITER, str(out), str(round_ * 12 + k * 6)],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                  for k in range(2)]
        for p in procs:
            _, err = p.communicate(timeout=120)
            assert "Traceback" not in err, err
        assert [p.returncode for p in procs] == [0, 0, 0, 0, 2, 0, 0], [p.args for p in procs]
    ids = [r["run_id"] for r in catalog.list_runs(out)]
    assert len(ids) == 3 + 36 and len(set(ids)) == len(ids)
    assert len(stored_ids(out)) == 39
