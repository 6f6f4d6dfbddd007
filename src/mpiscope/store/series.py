# SPDX-License-Identifier: BSD-3-Clause
"""The series of a stored run: the run itself, its series keys in run order,
and each series' samples (launches pooled)."""

from __future__ import annotations

from pathlib import Path

from mpiscope.store import checks, samples as _samples
from mpiscope.store.layout import CONTEXT_FILE
from mpiscope.store.ingest import SAMPLES_FILE, load_context
from mpiscope.store.labels import bench_label  # noqa: F401 - read from here by most callers
from mpiscope.store.run import Run
from mpiscope.common.inputs import read_json


def open_run(run_dir) -> Run:
    """The run, without its rows: its context from samples.parquet when stored
    (it includes what ingest derived), else from context.json (a run that
    failed early), else empty."""
    run_dir = Path(run_dir)
    if (run_dir / SAMPLES_FILE).exists():
        return Run.from_context(load_context(run_dir), run_dir)
    cj = run_dir / CONTEXT_FILE
    context = read_json(cj, hint="restore it from a copy, or `mpiscope runs rm` the run", missing_ok=True)
    return Run.from_context(checks.context(context, cj) if context is not None else {}, run_dir)


def series_keys(run: Run) -> list[tuple]:
    """(bench, algo, size), each once (launches pooled): benchmarks in run order,
    sizes ascending (refined sizes were measured after the others)."""
    first = {}
    for s in run.series:
        first.setdefault((s.bench, s.algo), len(first))
    keys = {(s.bench, s.algo, s.size) for s in run.series}
    return sorted(keys, key=lambda k: (first[k[:2]], k[2]))


# From this many rows on, series are worked on in two threads (numpy lets go
# of the GIL while it sorts and computes); below, a thread costs more than it saves.
THREADED_ROWS = 1 << 20


def map_series(fn, items, rows: int) -> list:
    """[fn(item) for item in items], in two threads when `rows` (the rows
    behind them) reach THREADED_ROWS; the results in the items' order."""
    if rows < THREADED_ROWS:
        return [fn(item) for item in items]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        return list(pool.map(fn, items))


def all_series_samples(table, run: Run, keys=None, remove_timer=False):
    """[(bench, algo, size, Samples)] for every series (or only those in `keys`),
    in run order, launches pooled; with `remove_timer`, the timer interval
    taken off every timed span."""
    groups = _samples.series_columns(table)
    none = _samples.no_rows(table)

    def one(key):
        bench, algo, size = key
        return (*key, _samples.columns_samples(groups.get(key, none), bench, size, algo, run, remove_timer))

    wanted = [key for key in series_keys(run) if keys is None or key in keys]
    return map_series(one, wanted, table.num_rows)
