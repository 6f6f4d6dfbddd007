# SPDX-License-Identifier: BSD-3-Clause
"""The lab's curves: per benchmark, placement class and design (or MPI's own
path, "mpi") the samples and their median per size, read from one or more
stored runs (the runs of one class pooled: repeated runs are more samples).

A design's series record their pair's placement class (params.placement,
read from sysfs by the engine); MPI's series have none and take the class
the designs of the same run and benchmark measured."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mpiscope.common.errors import UsageError
from mpiscope.store.ingest import load
from mpiscope.store.series import all_series_samples
from mpiscope.transport.paths import mechanism

BENCHES = ("tp_latency", "tp_bw", "tp_bw_cold", "tp_multibw", "tp_skew", "tp_overlap", "tp_poll")
DESIGNS = ("basic", "advanced", "cma", "offload", "hybrid")
SINGLE = ("basic", "advanced", "cma", "offload")  # the designs the hybrid chooses among, and offload
COPIES = ("basic", "advanced")


@dataclass
class Curve:
    bench: str
    algo: str
    placement: str
    unit: str  # "s" or "B/s"
    medians: dict = field(default_factory=dict)  # size -> median of the samples
    samples: dict = field(default_factory=dict)  # size -> valid values (np.ndarray), the runs pooled
    counts: dict = field(default_factory=dict)  # size -> valid samples
    skipped: dict = field(default_factory=dict)  # size -> reason
    params: dict = field(default_factory=dict)  # size -> the series' params

    def cost(self, size):
        """Lower is better: seconds, or seconds per byte for bandwidths."""
        m = self.medians.get(size)
        if m is None or not m > 0:
            return None
        return 1.0 / m if self.unit == "B/s" else m


@dataclass
class Lab:
    runs: list  # Run, in the order given
    curves: dict  # (bench, placement, algo) -> Curve

    def placements(self) -> list:
        return sorted({p for b, p, _ in self.curves if b in BENCHES})

    def library_paths(self, bench, placement) -> dict:
        """{(family, mode): Curve} of MPI libraries' own paths."""
        return {tuple(a.split("|")): c for (b, p, a), c in self.curves.items() if b == bench and p == placement}

    def get(self, bench, placement, algo) -> Curve | None:
        return self.curves.get((bench, placement, algo))

    def sizes(self, bench, placement) -> list:
        return sorted({s for (b, p, _), c in self.curves.items() if b == bench and p == placement for s in c.medians})


def _placement_of(run) -> dict:
    """bench -> the class its design series recorded (the first one); None ->
    the run's first, for benchmarks none of whose series recorded one."""
    out = {}
    for s in run.series:
        cls = (s.params or {}).get("placement")
        if s.bench in BENCHES and cls:
            out.setdefault(s.bench, cls)
            out.setdefault(None, cls)
    return out


def _add(c: Curve, size: int, values):
    """Pools a run's samples of one size into the curve."""
    v = np.asarray(values, dtype=np.float64)
    c.samples[size] = np.concatenate([c.samples[size], v]) if size in c.samples else v
    c.medians[size] = float(np.median(c.samples[size]))
    c.counts[size] = len(c.samples[size])


LIBRARY_BENCHES = {"pingpong": "lib_latency", "bw": "lib_bw"}


def _library_curves(table, run, curves, placement):
    """MPI's own path (paths.py) from a run's pingpong and bw: benches
    lib_latency, lib_bw (lib_bw_cold with --cache cold), algo "FAMILY|MODE"."""
    fam, mode, how = mechanism(run)
    if fam is None or mode is None:
        return
    for bench, algo, size, smp in all_series_samples(table, run):
        name = LIBRARY_BENCHES.get(bench)
        if name is None or algo != "mpi" or not len(smp.values):
            continue
        if name == "lib_bw" and run.cache == "cold":
            name = "lib_bw_cold"
        c = curves.setdefault((name, placement, f"{fam}|{mode}"), Curve(name, f"{fam}|{mode}", placement, smp.unit))
        _add(c, int(size), smp.values)
        c.params[int(size)] = {"run": run.run_id, "chosen_by": how}


def lab_of(run_dirs) -> Lab:
    runs, curves, library = [], {}, []
    for run_dir in run_dirs:
        table, run = load(Path(run_dir))
        runs.append(run)
        library.append((table, run))
        where = _placement_of(run)
        params = {(s.bench, s.algo, s.size): s.params or {} for s in run.series}
        for bench, algo, size, smp in all_series_samples(table, run):
            if bench not in BENCHES:
                continue
            p = params.get((bench, algo, size), {})
            cls = p.get("placement") or where.get(bench) or where.get(None) or "unknown"
            c = curves.setdefault((bench, cls, algo), Curve(bench, algo, cls, smp.unit))
            c.params[int(size)] = p
            if p.get("skipped"):
                c.skipped[int(size)] = p["skipped"]
            elif len(smp.values):
                _add(c, int(size), smp.values)
    # library runs carry no placement of their own: the lab's (its first class)
    first = next(iter(sorted({p for _, p, _ in curves})), "unknown")
    for table, run in library:
        _library_curves(table, run, curves, _placement_of(run).get(None) or first)
    if not any(b in BENCHES for b, _, _ in curves):
        names = ", ".join(r.run_id for r in runs)
        raise UsageError(
            f"run {names} has no transport lab benchmarks: measure them with "
            "`mpiscope run -n 2 --suite transport` (or --bench tp_latency,tp_bw,…)"
        )
    return Lab(runs, curves)
