# SPDX-License-Identifier: BSD-3-Clause
"""What the run catalog keeps of a run for `mpiscope history`, so that
history reads one column instead of every run's context.json and
quality.json: the context fields of the series key (series.py) and of what
changed (changes.py), and every series' median with its 95% interval."""

from __future__ import annotations

import json
import math

from mpiscope.history.changes import MPI_ENV

_TOP = ("kind", "np", "mpi", "mpi_library", "launcher", "git_sha", "hosts", "mpi_identity",
        "nodes", "imported")
_PLAN = ("cluster", "timer", "cache", "sync")
_MACHINE = ("host", "kernel", "cpu_model", "governor", "mpiscope_version", "engine_sha256",
            "libraries")
_ENV = ("SLURM_CLUSTER_NAME", "SLURM_JOB_PARTITION")


def _pick(value, keys):
    return {k: value[k] for k in keys if k in value} if isinstance(value, dict) else value


def history_context(context: dict) -> dict:
    """The part of a run context history reads (series key, --where, what changed)."""
    kept = {k: context[k] for k in _TOP if k in context}
    for name, keys in (("plan", _PLAN), ("machine", _MACHINE), ("writer", ("host",))):
        if name in context:
            kept[name] = _pick(context[name], keys)
    if "env" in context:   # kept even when empty: a variable it lacks was unset
        env = context["env"] if isinstance(context["env"], dict) else {}
        kept["env"] = {k: v for k, v in env.items() if k in _ENV or str(k).startswith(MPI_ENV)}
    return kept


def medians(run_dir) -> list | None:
    """[bench, algo, size, unit, median, ci_low, ci_high, n] of every measured
    series in the run's quality.json; None when it holds none this version
    reads (history then computes them from the samples)."""
    from mpiscope.stats import quality   # here: listing an unchanged root never needs it

    verdicts = quality.load_stored(run_dir)
    if verdicts is None or not all(math.isfinite(v.median) or v.n == 0 for v in verdicts):
        return None
    return medians_of(verdicts)


def medians_of(verdicts) -> list:
    """[bench, algo, size, unit, median, ci_low, ci_high, n] of the verdicts of measured series."""
    return [[v.bench, v.algo, v.size, v.unit, v.median, v.ci_low, v.ci_high, v.n]
            for v in verdicts if v.n > 0 and not v.skipped and math.isfinite(v.median)]


def summary(run_dir, context: dict) -> tuple[str, str]:
    """The catalog's `series_context` and `medians` columns of a run, as JSON.
    Runs of one series mostly store the same series context, which a reader
    then parses once."""
    return json.dumps(history_context(context), sort_keys=True), json.dumps(medians(run_dir))
