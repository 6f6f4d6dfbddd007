# SPDX-License-Identifier: BSD-3-Clause
"""What the catalog keeps of each run for `mpiscope history`, so that history
reads one table instead of every run's context.json and quality.json: the
context fields of the series key (history/series.py) and of what changed
(history/changes.py), and every series' median with its 95% interval as the
run stored it in quality.json (stats/quality.py writes it; read here as
plain JSON, so the catalog needs nothing above store)."""

from __future__ import annotations

import json
import math
from pathlib import Path

from mpiscope.common.inputs import InputError, read_json
from mpiscope.store.layout import QUALITY_FILE

QUALITY_FORMAT = "mpiscope-quality"  # quality.json's "format" and "schema_version"
QUALITY_SCHEMA_VERSION = 1

# Environment variables that MPI libraries and their transports read.
MPI_ENV = ("OMPI_", "PRTE_MCA_", "PMIX_MCA_", "UCX_", "FI_", "I_MPI_", "MPICH_", "MPIR_CVAR_", "HYDRA_")

_TOP = ("kind", "np", "mpi", "mpi_library", "launcher", "git_sha", "hosts", "mpi_identity", "nodes", "imported")
_PLAN = ("cluster", "timer", "cache", "sync")
_MACHINE = ("host", "kernel", "cpu_model", "governor", "mpiscope_version", "engine_sha256", "libraries")
_ENV = ("SLURM_CLUSTER_NAME", "SLURM_JOB_PARTITION")


def _pick(value, keys):
    return {k: value[k] for k in keys if k in value} if isinstance(value, dict) else value


def history_context(context: dict) -> dict:
    """The part of a run context history reads (series key, --where, what changed)."""
    kept = {k: context[k] for k in _TOP if k in context}
    for name, keys in (("plan", _PLAN), ("machine", _MACHINE), ("writer", ("host",))):
        if name in context:
            kept[name] = _pick(context[name], keys)
    if "env" in context:  # kept even when empty: a variable it lacks was unset
        env = context["env"] if isinstance(context["env"], dict) else {}
        kept["env"] = {k: v for k, v in env.items() if k in _ENV or str(k).startswith(MPI_ENV)}
    return kept


def _number(value) -> float:
    return math.nan if value is None else float(value)


def median_row(entry: dict) -> list | None:
    """[bench, algo, size, unit, median, ci_low, ci_high, n] of one stored
    verdict of a measured series; None for a series skipped or without samples."""
    n = int(entry["n"])
    median = _number(entry.get("median"))
    if n <= 0 or "skipped" in str(entry.get("stop") or "").split(",") or not math.isfinite(median):
        return None
    return [
        entry["bench"],
        entry.get("algo", "mpi"),
        int(entry["size"]),
        entry.get("unit", "s"),
        median,
        _number(entry.get("ci_low")),
        _number(entry.get("ci_high")),
        n,
    ]


def stored_medians(run_dir) -> list | None:
    """The median rows (median_row) of every measured series in the run's
    quality.json; None when it holds none this version reads, or a series
    measured without its median (history then computes them from the samples)."""
    try:
        doc = read_json(Path(run_dir) / QUALITY_FILE)
        if doc.get("format") != QUALITY_FORMAT or doc.get("schema_version") != QUALITY_SCHEMA_VERSION:
            return None
        entries = doc["series"]
        if not all(int(e["n"]) == 0 or math.isfinite(_number(e.get("median"))) for e in entries):
            return None
        return [row for row in map(median_row, entries) if row is not None]
    except (InputError, AttributeError, ValueError, KeyError, TypeError):
        return None  # absent (a run stored without verdicts) or damaged: computed again


def summary(run_dir, context: dict) -> tuple[str, str]:
    """The catalog's `series_context` and `medians` columns of a run, as JSON.
    Runs of one series mostly store the same series context, which a reader
    then parses once."""
    return json.dumps(history_context(context), sort_keys=True), json.dumps(stored_medians(run_dir))
