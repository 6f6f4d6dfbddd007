# SPDX-License-Identifier: BSD-3-Clause
"""The Python API, for notebooks: stored runs as pandas DataFrames, and runs measured.

    import mpiscope
    mpiscope.runs("mpiscope-runs")                        # one row per run
    run = mpiscope.load_run("mpiscope-runs/<run_id>")     # or an id, a prefix, "latest"
    run.samples(bench="pingpong"); run.summary(); run.context   # samples, show's table, context
    mpiscope.run(MeasureRequest(launch=LaunchRequest(np=2), bench="pingpong"))  # as `mpiscope run`

Values are in base units, as in `show --json` (column `unit`). Like the CLI this sits
above every other package; `import mpiscope` itself imports none of it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from mpiscope.measure.request import LaunchRequest, MeasureRequest  # noqa: F401 (the API offers them)
from mpiscope.store.layout import DEFAULT_OUT
from mpiscope.common.errors import UsageError
from mpiscope.store import catalog
from mpiscope.store import run as stored
from mpiscope.store.ingest import SAMPLES_FILE, load
from mpiscope.store.samples import series_derived, split_series, unit_of
from mpiscope.store.series import open_run, series_keys
from mpiscope.views.show import STAT_KEYS, show_rows

SAMPLE_COLUMNS = ("bench", "algo", "size", "launch", "rep", "rank", "peer", "value", "unit", "valid")
SUMMARY_COLUMNS = ("bench", "algo", "size", "unit", "n", "invalid", *STAT_KEYS, "ci_level", "stop", "launches")
RUNS_COLUMNS = ("run_id", "created", "status", "mpi", "np", "benches", "path")


class Run(stored.Run):
    """A stored run (store/run.py: its context as typed fields, `.context`
    whole) that also gives its samples and summary as DataFrames."""

    def samples(self, bench: str | None = None, algo: str | None = None, size: int | None = None) -> pd.DataFrame:
        """One row per sample, valid or not, in run order, of the series selected by
        `bench`, `algo`, `size` (every one by default). Columns: bench, algo, size
        (bytes); launch, rep; rank (the sender of a one-way time, the initiator of a
        round trip or a bandwidth, a collective's rank that finished last; <NA> when
        none could be derived); peer (the other rank of a pair; <NA> for
        collectives); value (the latency in s or bandwidth in B/s that `show`
        summarizes; NaN when a partner's row is missing); unit ("s" or "B/s");
        valid (False for a sample a rank started late, or without a value: `show`
        counts it as invalid)."""
        if self.path is None or not (self.path / SAMPLES_FILE).exists():
            return _frame({}, SAMPLE_COLUMNS)
        table, run = load(self.path)
        keys = [
            k
            for k in series_keys(run)
            if (bench is None or k[0] == bench)
            and (algo is None or k[1] == algo)
            and (size is None or k[2] == int(size))
        ]
        if not keys:
            measured = ", ".join(dict.fromkeys(k[0] for k in series_keys(run))) or "none"
            raise UsageError(
                f"run {self.run_id} has no series with bench={bench}, algo={algo}, "
                f"size={size}; its benchmarks: {measured}"
            )
        groups = split_series(table)
        parts = []
        for b, a, s in keys:
            rule, d = series_derived(groups.get((b, a, s), table.slice(0, 0)), b, s, a, run)
            n = len(d.values)
            parts.append(
                {
                    "bench": np.full(n, b, dtype=object),
                    "algo": np.full(n, a, dtype=object),
                    "size": np.full(n, s, dtype=np.int64),
                    "launch": d.launch,
                    "rep": d.rep,
                    "rank": d.source_a,
                    "peer": d.source_b,
                    "value": d.values,
                    "unit": np.full(n, unit_of(rule), dtype=object),
                    "valid": d.valid,
                }
            )
        columns = {c: np.concatenate([p[c] for p in parts]) for c in SAMPLE_COLUMNS}
        for c in ("rank", "peer"):
            columns[c] = _optional_rank(columns[c])
        return _frame(columns, SAMPLE_COLUMNS)

    def summary(self) -> pd.DataFrame:
        """The table `mpiscope show` prints, one row per bench × algo × size
        (values in s or B/s; n valid samples, invalid, min, median with its
        CI, p90, p99, max, why measuring stopped)."""
        rows = show_rows(self.path) if self.path is not None else []
        return pd.DataFrame(rows) if rows else _frame({}, SUMMARY_COLUMNS)


def _optional_rank(ranks):
    """-1 (the derivation's "no such rank") as <NA>."""
    ranks = np.asarray(ranks, dtype=np.int64)
    return pd.arrays.IntegerArray(ranks.astype(np.int32), ranks < 0)


def _frame(columns: dict, names) -> pd.DataFrame:
    if not columns:
        return pd.DataFrame({c: pd.Series(dtype=object) for c in names})
    return pd.DataFrame(columns, columns=list(names))


def load_run(path, out=DEFAULT_OUT) -> Run:
    """The run at `path` (a run directory), or named by `path` under the
    output root `out`: a run id, a unique prefix of one, or "latest"."""
    given = Path(path)
    if given.exists() and not catalog.is_run_dir(given):
        raise UsageError(
            f"{given} is not a run directory (it has neither context.json nor "
            f"{SAMPLES_FILE}); give a run directory, or a run id with out="
        )
    run_dir = catalog.resolve(out, str(path))
    return Run.from_context(open_run(run_dir).context, run_dir)


def runs(out=DEFAULT_OUT) -> pd.DataFrame:
    """The runs under the output root `out`, oldest first: run_id, created,
    status, mpi, np, benches (a list), path (give it to load_run)."""
    rows = catalog.list_runs(out)
    return pd.DataFrame(rows, columns=list(RUNS_COLUMNS)) if rows else _frame({}, RUNS_COLUMNS)


def run(request: MeasureRequest) -> Run:
    """Measures what `request` asks for, as `mpiscope run` with the same
    options does, and returns the stored run (its `status` says whether it
    completed). Bad input raises UsageError before anything is launched."""
    from mpiscope.measure import runner
    from mpiscope.measure.plan import make_plan

    run_dir, _context = runner.run(make_plan(request), ["mpiscope.api.run"])
    return load_run(run_dir)
