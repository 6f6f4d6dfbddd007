# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: stored runs for the run catalog's tests (their context.json
alone, written as the runner writes it), and the run ids a catalog file holds."""

import json

from rawgen import context_for


def make_run(out, run_id, created, status="completed", benches=("pingpong",)):
    run = out / run_id
    run.mkdir(parents=True)
    ctx = context_for(run_id=run_id, created=created, status=status, benches=list(benches))
    (run / "context.json").write_text(json.dumps(ctx))
    return run


def three_runs(out):
    """Three runs under `out`: completed, failed, and one of two collectives."""
    make_run(out, "20240301-090000-aaaa", "2024-03-01T09:00:00+00:00")
    make_run(out, "20240302-090000-bbbb", "2024-03-02T09:00:00+00:00", status="failed")
    make_run(out, "20240302-100000-cccc", "2024-03-02T10:00:00+00:00", benches=("allreduce", "bcast"))
    return out


def stored_ids(out):
    import duckdb

    con = duckdb.connect(str(out / "catalog.duckdb"))
    try:
        return sorted(r[0] for r in con.execute("SELECT run_id FROM runs").fetchall())
    finally:
        con.close()
