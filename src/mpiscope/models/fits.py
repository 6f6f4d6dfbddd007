# SPDX-License-Identifier: BSD-3-Clause
"""Model fits of every benchmark of a run: Hockney line and piecewise zones.

Pure computation: loads the run, builds one curve per bench × algo
(curves.py), fits it (hockney.py, piecewise.py) and returns data; the text
and JSON forms are in views/fit.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mpiscope.models.curves import Curve, run_curves
from mpiscope.common.errors import UsageError
from mpiscope.models.hockney import LineFit, hockney
from mpiscope.models.piecewise import Piecewise, piecewise
from mpiscope.store.ingest import load
from mpiscope.store.run import Run
from mpiscope.store.series import all_series_samples
from mpiscope.stats.quality import MIN_SAMPLES

DEFAULT_SEED = 1
DEFAULT_BOOT = 1000
# A line that explains less than 90% of how the medians vary says little
# about α and β: the piecewise fit is then the model to read.
POOR_R2 = 0.9
UNITS = {"median_s": "s", "scale_s": "s", "alpha": "s", "beta": "s/B", "bandwidth": "B/s", "n_half": "B", "size": "B"}


@dataclass
class BenchFit:
    """The fits of one bench × algo (None with a note when it cannot be fitted)."""

    curve: Curve
    hockney: LineFit | None
    piecewise: Piecewise | None
    note: str = ""
    flags: list = field(default_factory=list)  # what makes α, β or the fit doubtful

    def to_dict(self) -> dict:
        c = self.curve
        return {
            "bench": c.bench,
            "algo": c.algo,
            "quantity": c.quantity,
            "points": [
                {"size": int(s), "median_s": float(m), "scale_s": float(sc), "n": int(n)}
                for s, m, sc, n in zip(c.sizes, c.medians, c.scales, c.counts)
            ],
            "dropped": [{"size": s, "reason": r} for s, r in c.dropped],
            "hockney": self.hockney.to_dict() if self.hockney else None,
            "piecewise": self.piecewise.to_dict() if self.piecewise else None,
            "note": self.note,
            "flags": self.flags,
        }


@dataclass
class FitResult:
    run_id: str
    run: Run
    seed: int
    n_boot: int
    level: float
    min_points: int
    fits: list = field(default_factory=list)  # BenchFit, in run order

    def to_dict(self) -> dict:
        return {
            "run_id": self.run_id,
            "units": UNITS,
            "seed": self.seed,
            "n_boot": self.n_boot,
            "level": self.level,
            "min_points": self.min_points,
            "fits": [f.to_dict() for f in self.fits],
        }


def line_flags(line: LineFit, what: str, judge_r2: bool = True) -> list[str]:
    """Negative α, β ≤ 0 (no latency or time per byte is negative), and with
    `judge_r2` a poor fit (R² below POOR_R2)."""
    out = []
    for name, e, unit, factor in (("α", line.alpha, "us", 1e6), ("β", line.beta, "ns/B", 1e9)):
        # β = 0 too: a slope of nothing gives no bandwidth.
        if e.point < 0 or (name == "β" and e.point == 0):
            ci = ", its CI reaches 0" if e.high >= 0 and e.point < 0 else ""
            sign = "<" if e.point < 0 else "="
            out.append(
                f"{what}: {name} {sign} 0 ({e.point * factor:.4g} {unit}{ci}): the medians do not lie "
                "on a line with a positive "
                + ("intercept" if name == "α" else "slope")
                + "; read the piecewise fit"
                + (", 1/β is undefined" if name == "β" else "")
            )
    if judge_r2 and line.r2 < POOR_R2:  # NaN (constant medians) is not judged
        out.append(
            f"{what}: poor fit, R² {line.r2:.3g} < {POOR_R2:g} (largest residual "
            f"{100 * line.max_rel_residual:.0f}% at {line.worst_size} B)"
        )
    return out


def fit_curve(curve: Curve, level: float = 0.95, min_points: int = 3) -> BenchFit:
    """Hockney and piecewise fits of one curve, with their flags. A segment's
    R² is not judged: over a few sizes of nearly equal time it is near 0
    however well the line fits."""
    if len(curve) < 2:
        what = "one size" if len(curve) == 1 else "no usable sizes"
        return BenchFit(curve, None, None, f"not fitted: measured at {what}; a line needs at least two")
    h, pw = hockney(curve, level), piecewise(curve, level, min_points)
    flags = line_flags(h, "Hockney")
    few = [int(size) for size, n in zip(curve.sizes, curve.counts) if n < MIN_SAMPLES]
    if few:
        flags.append(
            f"insufficient data at {len(few)} of {len(curve)} sizes ("
            + ", ".join(f"{size} B" for size in few)
            + f"): fewer than {MIN_SAMPLES} valid "
            "samples give a median no 95% CI"
        )
    for seg in pw.segments if pw.n_segments > 1 else ():
        flags += line_flags(seg, f"segment {seg.first_size}-{seg.last_size} B", judge_r2=False)
    return BenchFit(curve, h, pw, flags=flags)


def fit_series(
    series,
    run: Run,
    seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_BOOT,
    level: float = 0.95,
    min_points: int = 3,
    bench: str | None = None,
) -> FitResult:
    """Fit [(bench, algo, size, Samples)] (as series.all_series_samples returns)."""
    rng = np.random.default_rng(seed)
    curves = run_curves(series, rng, n_boot, level, bench)
    result = FitResult(run.run_id, run, seed, n_boot, level, min_points)
    result.fits = [fit_curve(c, level, min_points) for c in curves]
    return result


def fit_run(
    run_dir,
    seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_BOOT,
    level: float = 0.95,
    min_points: int = 3,
    bench: str | None = None,
) -> FitResult:
    """Fit every benchmark of a stored run (or only `bench`)."""
    table, run = load(Path(run_dir))
    series = all_series_samples(table, run)
    if bench is not None and not any(b == bench for b, *_ in series):
        present = ", ".join(dict.fromkeys(b for b, *_ in series)) or "none"
        raise UsageError(f"run {run.run_id} has no benchmark '{bench}'; it has: {present}")
    return fit_series(series, run, seed, n_boot, level, min_points, bench)
