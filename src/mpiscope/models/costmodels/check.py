# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope model check`: every measured algorithm × size of a run against
its predicted time.

α and β come from the run's own point-to-point data (the Hockney fit of
pingpong's half round trip, fits.fit_run) unless a machine model file gives
them; the sender/receiver variant needs αs, βs, αr, βr from such a file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mpiscope.common.errors import UsageError
from mpiscope.models.fits import fit_run
from mpiscope.store.ingest import load
from mpiscope.store.series import all_series_samples
from mpiscope.models.costmodels import COLLECTIVES, find, predict_time
from mpiscope.models.costmodels.params import ModelParams


@dataclass
class MeasuredCell:
    """One algorithm × size of our own collectives measured in a run (this
    check's and the simulator's, sim/check.py)."""

    bench: str
    algo: str
    size: int
    n: int
    measured: float  # median, seconds


@dataclass
class CheckRow(MeasuredCell):
    hockney: float | None  # predicted, seconds
    sender_receiver: float | None

    @staticmethod
    def _err(pred, meas):
        return None if pred is None or not meas > 0 else (pred - meas) / meas

    @property
    def hockney_error(self):
        return self._err(self.hockney, self.measured)

    @property
    def sr_error(self):
        return self._err(self.sender_receiver, self.measured)

    def to_dict(self) -> dict:
        return {
            "bench": self.bench,
            "algo": self.algo,
            "size": self.size,
            "n": self.n,
            "measured_s": self.measured,
            "hockney_s": self.hockney,
            "hockney_rel_error": self.hockney_error,
            "sender_receiver_s": self.sender_receiver,
            "sender_receiver_rel_error": self.sr_error,
        }


@dataclass
class CheckResult:
    run_id: str
    p: int
    params: ModelParams
    source: str
    rows: list = field(default_factory=list)

    def summary(self) -> list[dict]:
        """Per bench × algorithm: the median and largest |relative error|."""
        groups = {}
        for r in self.rows:
            groups.setdefault((r.bench, r.algo), []).append(r)
        out = []
        for (bench, algo), rows in groups.items():
            entry = {"bench": bench, "algo": algo, "sizes": len(rows)}
            for name, attr in (("hockney", "hockney_error"), ("sender_receiver", "sr_error")):
                errs = [abs(getattr(r, attr)) for r in rows if getattr(r, attr) is not None]
                entry[f"{name}_median_abs_error"] = float(np.median(errs)) if errs else None
                entry[f"{name}_max_abs_error"] = max(errs) if errs else None
            out.append(entry)
        return out

    def to_dict(self) -> dict:
        return {
            "run_id": self.run_id,
            "p": self.p,
            "params": self.params.to_dict(),
            "source": self.source,
            "rows": [r.to_dict() for r in self.rows],
            "summary": self.summary(),
        }


def fitted_params(run_dir) -> ModelParams:
    """α, β of the Hockney fit of the run's pingpong."""
    try:
        result = fit_run(run_dir, bench="pingpong")
    except UsageError:
        raise UsageError(
            "the run has no pingpong to fit α and β from: measure it too "
            "(mpiscope run --bench pingpong,… ) or give --machine FILE"
        ) from None
    fit = result.fits[0] if result.fits else None
    if fit is None or fit.hockney is None:
        note = fit.note if fit else "no pingpong sizes"
        raise UsageError(
            f"cannot fit α and β from the run's pingpong ({note}); measure it at "
            "two sizes or more, or give --machine FILE"
        )
    return ModelParams(alpha=max(0.0, fit.hockney.alpha.point), beta=max(0.0, fit.hockney.beta.point))


def check_run(run_dir, machine: ModelParams | None = None, gamma=None, segment=None, bench=None) -> CheckResult:
    run_dir = Path(run_dir)
    table, run = load(run_dir)
    p = int(run.np or 0)
    series = [
        (b, a, s, smp)
        for b, a, s, smp in all_series_samples(table, run)
        if b in COLLECTIVES and find(b, a) is not None and (bench is None or b == bench)
    ]
    if not series:
        what = f"benchmark '{bench}'" if bench else "any collective"
        raise UsageError(
            f"run {run.run_id} has no measurement of our own "
            f"algorithms for {what}: measure with mpiscope run --bench B --algo all"
        )
    if machine is not None and machine.alpha is not None and machine.beta is not None:
        params, source = machine, "machine model file"
    elif machine is not None and machine.has_sr:
        params, source = machine, "machine model file (α = αs + αr, β = βs + βr)"
    else:
        params = fitted_params(run_dir).with_defaults(machine or ModelParams())
        source = "Hockney fit of this run's pingpong"
    plan_segment = run.plan.get("segment")
    params = ModelParams(
        alpha=params.alpha,
        beta=params.beta,
        gamma=gamma if gamma is not None else params.gamma,
        alpha_s=params.alpha_s,
        beta_s=params.beta_s,
        alpha_r=params.alpha_r,
        beta_r=params.beta_r,
        segment=segment or plan_segment or params.segment,
    )
    hock, sr = params.hockney_costs(), params.sr_costs()
    result = CheckResult(run.run_id, p, params, source)
    for b, a, size, smp in series:
        if len(smp.values) == 0:
            continue
        result.rows.append(
            CheckRow(
                b,
                a,
                int(size),
                len(smp.values),
                float(np.median(smp.values)),
                predict_time(b, a, size, p, hock) if hock else None,
                predict_time(b, a, size, p, sr) if sr else None,
            )
        )
    return result
