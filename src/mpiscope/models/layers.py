# SPDX-License-Identifier: BSD-3-Clause
"""The same message at several layers (Piernas et al. 1997): MPI, plain TCP
sockets and a shared-memory ring between the same two ranks, measured by
layer_pingpong (half round trip) and layer_bw (time per message of a stream).

Per layer: the median time at every size, a piecewise α + β·n fit
(piecewise.py) and the stream bandwidth. Per size: the share of MPI's time
each lower layer accounts for, lower / MPI, with a bootstrap CI of the ratio of
independently resampled medians. Near 1, MPI adds little on that layer; above
1, the layer is slower than MPI (MPI does not use it, or uses it better).
Pure computation; text and JSON are in views/layers.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mpiscope.models.curves import build_curve
from mpiscope.common.errors import UsageError
from mpiscope.models.loggp import DEFAULT_BOOT, DEFAULT_SEED, estimate_of, med
from mpiscope.models.piecewise import Piecewise, piecewise
from mpiscope.stats.quality import MIN_SAMPLES
from mpiscope.store.ingest import load
from mpiscope.store.run import Run
from mpiscope.store.series import all_series_samples

LAYER_ORDER = ("mpi", "tcp", "shm")
BENCHES = ("layer_pingpong", "layer_bw")


@dataclass
class LayerCurve:
    """One layer of one benchmark."""

    bench: str
    layer: str
    times: dict  # size -> Estimate (s: half round trip, or per message)
    fit: Piecewise | None = None
    note: str = ""
    skipped: dict = field(default_factory=dict)  # size -> reason
    counts: dict = field(default_factory=dict)  # size -> valid samples

    def few(self) -> list:
        """Sizes whose median rests on fewer than MIN_SAMPLES samples."""
        return [s for s, n in sorted(self.counts.items()) if n < MIN_SAMPLES]

    def to_dict(self) -> dict:
        return {
            "bench": self.bench,
            "layer": self.layer,
            "times": [{"size": s, "estimate": e} for s, e in sorted(self.times.items())],
            "piecewise": self.fit.to_dict() if self.fit else None,
            "note": self.note,
            "skipped": [{"size": s, "reason": r} for s, r in sorted(self.skipped.items())],
            "samples": [{"size": s, "n": n} for s, n in sorted(self.counts.items())],
        }


@dataclass
class LayersResult:
    run_id: str
    run: Run
    seed: int
    n_boot: int
    level: float
    curves: dict  # (bench, layer) -> LayerCurve
    shares: dict  # (bench, layer) -> {size: Estimate of layer / mpi}
    transport: str | None  # the lower layer MPI most likely runs over here

    def layers(self, bench) -> list:
        return [l for b, l in self.curves if b == bench]

    def to_dict(self) -> dict:
        return {
            "run_id": self.run_id,
            "seed": self.seed,
            "n_boot": self.n_boot,
            "level": self.level,
            "units": {"time": "s", "share": "lower layer / MPI"},
            "mpi_transport_guess": self.transport,
            "curves": [c.to_dict() for c in self.curves.values()],
            "shares": [
                {"bench": b, "layer": l, "by_size": [{"size": s, "share": e} for s, e in sorted(v.items())]}
                for (b, l), v in self.shares.items()
            ],
        }


def _skips(run: Run) -> dict:
    out = {}
    for s in run.series:
        reason = (s.params or {}).get("skipped")
        if s.bench in BENCHES and reason:
            out.setdefault((s.bench, s.algo), {})[s.size] = reason
    return out


def _transport(run: Run) -> str | None:
    """shm when both ranks of the pair share a host, else tcp."""
    ranks = run.ranks.get("0") or {}
    a, b = ranks.get("0", {}).get("host"), ranks.get("1", {}).get("host")
    if a is None or b is None:
        return None
    return "shm" if a == b else "tcp"


def layers_series(series, run: Run, seed=DEFAULT_SEED, n_boot=DEFAULT_BOOT, level=0.95, min_points=3) -> LayersResult:
    rng = np.random.default_rng(seed)
    skips = _skips(run)
    values, meds = {}, {}
    for bench, algo, size, s in series:
        if bench not in BENCHES:
            continue
        m = med(s.values, rng, n_boot)
        if m is None:
            continue
        values.setdefault((bench, algo), {})[int(size)] = s.values
        meds.setdefault((bench, algo), {})[int(size)] = m
    keys = sorted(
        set(values) | set(skips),
        key=lambda k: (BENCHES.index(k[0]), LAYER_ORDER.index(k[1]) if k[1] in LAYER_ORDER else len(LAYER_ORDER), k[1]),
    )
    if not keys:
        raise UsageError(
            f"run {run.run_id} has no layer benchmarks: measure them "
            "with e.g. `mpiscope run -n 2 --bench layer_pingpong,layer_bw`"
        )
    curves = {}
    for key in keys:
        bench, layer = key
        times = {size: m.estimate(level) for size, m in sorted(meds.get(key, {}).items())}
        c = LayerCurve(
            bench, layer, times, skipped=skips.get(key, {}), counts={size: m.n for size, m in meds.get(key, {}).items()}
        )
        if len(times) >= 2:
            curve = build_curve(bench, layer, values[key], rng, n_boot, level)
            c.fit = piecewise(curve, level, min_points) if len(curve) >= 2 else None
        else:
            c.note = "a fit needs two sizes or more" if times else "not measured"
        curves[key] = c
    shares = {}
    for (bench, layer), by_size in meds.items():
        if layer == "mpi" or (bench, "mpi") not in meds:
            continue
        base = meds[(bench, "mpi")]
        out = {}
        for size, m in sorted(by_size.items()):
            if size in base:
                with np.errstate(divide="ignore", invalid="ignore"):
                    out[size] = estimate_of(m.point / base[size].point, m.boot / base[size].boot, level)
        shares[(bench, layer)] = out
    return LayersResult(run.run_id, run, seed, n_boot, level, curves, shares, _transport(run))


def layers_run(run_dir, seed=DEFAULT_SEED, n_boot=DEFAULT_BOOT, level=0.95, min_points=3) -> LayersResult:
    table, run = load(Path(run_dir))
    return layers_series(all_series_samples(table, run), run, seed, n_boot, level, min_points)
