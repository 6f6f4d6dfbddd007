# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: nights of stored runs for `mpiscope history`, each a
context.json as the runner writes it and a quality.json holding every
series' median with its 95% interval, as a stored run has them; no samples,
no MPI. The medians are the caller's: a series with a known step."""

import json
from datetime import datetime, timedelta

import numpy as np

from rawgen import context_for

START = datetime(2026, 3, 1, 2, 0, 0)


def night_context(run_id, created, mpi_version="4.1.5", env=None, kernel="6.1.0-18-amd64",
                  hosts=None, **extra):
    machine = {"host": "login1", "kernel": kernel, "cpu_model": "AMD EPYC 7763",
               "governor": "performance", "mpiscope_version": "0.1.0", "engine_sha256": "00aa11bb22cc33dd",
               "libraries": {"libucp.so.0": "/usr/lib/libucp.so.0.15.0"}}
    return context_for(
        run_id=run_id, created=created, benches=["allreduce"], np=32, launcher="srun",
        mpi_identity={"implementation": "open-mpi", "version": mpi_version,
                      "library": f"Open MPI v{mpi_version}"},
        plan={"sync": "window", "timer": "auto", "cache": "hot"},
        env={"SLURM_CLUSTER_NAME": "alpine", "SLURM_JOB_PARTITION": "batch", **(env or {})},
        hosts=hosts or {"n01": 16, "n02": 16}, machine=machine, writer={"host": "n01", "pid": 1},
        **extra)


def write_night(out, i, medians, halfwidth=0.01, unit="s", **context):
    """Run i (one a night from START) with {(bench, size): median}, every CI
    ±halfwidth of its median. Returns the run id."""
    when = START + timedelta(days=i)
    run_id = when.strftime("%Y%m%d-%H%M%S-") + f"{i:04x}"
    run = out / run_id
    run.mkdir(parents=True)
    (run / "context.json").write_text(json.dumps(night_context(run_id, when.isoformat(), **context)))
    series = [{"bench": bench, "algo": "mpi", "size": size, "unit": unit, "n": 200, "invalid": 0,
               "stop": "ci", "ci_reached": True, "ci_halfwidth": halfwidth, "start": "window",
               "flags": [], "details": {}, "median": m, "ci_low": m * (1 - halfwidth),
               "ci_high": m * (1 + halfwidth)} for (bench, size), m in medians.items()]
    (run / "quality.json").write_text(json.dumps({"format": "mpiscope-quality", "schema_version": 1,
                                                  "thresholds": {}, "series": series}))
    return run_id


def noisy_levels(n, step_at=None, step=0.0, noise=0.01, seed=1, base=20e-6):
    """n medians around `base` with relative noise; from run `step_at` on, times (1 + step)."""
    rng = np.random.default_rng(seed)
    values = base * (1 + rng.normal(0.0, noise, n))
    if step_at is not None:
        values[step_at:] *= 1 + step
    return [float(v) for v in values]


def write_series(out, levels, halfwidth=0.01, key=("allreduce", 65536), changed_from=None, **changes):
    """One run a night with the medians `levels`; from run `changed_from` on,
    the context carries `changes` (e.g. mpi_version="4.1.6"). Returns the run ids."""
    return [write_night(out, i, {key: m}, halfwidth,
                        **(changes if changed_from is not None and i >= changed_from else {}))
            for i, m in enumerate(levels)]
