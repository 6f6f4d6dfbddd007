# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope transport advise`: from stored lab runs to crossovers per
placement class and cache state, and to the settings per MPI library."""

from __future__ import annotations

from dataclasses import dataclass

from mpiscope.transport.crossovers import best_rows, crossovers, library_crossovers, overlap
from mpiscope.transport.curves import Lab, lab_of
from mpiscope.transport.settings import library_settings, thresholds


@dataclass
class Advice:
    lab: Lab
    crossovers: list  # Crossover
    thresholds: dict  # placement -> Thresholds
    settings: dict  # placement -> [LibrarySettings]
    library: dict  # placement -> {family: (first, last_loss)} of MPI's own paths
    best: dict  # bench -> [BestRow]
    overlap: list  # dicts (crossovers.overlap)

    def to_dict(self) -> dict:
        return {
            "runs": [r.run_id for r in self.lab.runs],
            "placements": self.lab.placements(),
            "crossovers": [x.to_dict() for x in self.crossovers],
            "thresholds": {k: dict(vars(v)) for k, v in self.thresholds.items()},
            "settings": {k: [s.to_dict() for s in v] for k, v in self.settings.items()},
            "library_crossovers": {
                k: {f: {"single_copy_from": a, "copy_up_to": b} for f, (a, b) in v.items()}
                for k, v in self.library.items()
            },
            "best": {b: [dict(vars(r)) for r in rows] for b, rows in self.best.items()},
            "overlap": self.overlap,
            "units": {"time": "s", "bandwidth": "B/s", "ratio": "cost / the best single design's"},
        }


def _cma_why(lab: Lab, placement) -> str | None:
    """Why cma did not run for this class (the first skip reason), if it never did."""
    reasons = [r for (b, p, a), c in lab.curves.items() if p == placement and a == "cma" for r in c.skipped.values()]
    ran = any(c.medians for (b, p, a), c in lab.curves.items() if p == placement and a == "cma")
    return None if ran or not reasons else reasons[0]


def advise(run_dirs) -> Advice:
    lab = lab_of(run_dirs)
    xs = crossovers(lab)
    th = {p: thresholds(p, xs, _cma_why(lab, p)) for p in lab.placements()}
    lib = {p: library_crossovers(lab, p) for p in lab.placements()}
    return Advice(
        lab,
        xs,
        th,
        {p: library_settings(t, lib[p]) for p, t in th.items()},
        lib,
        {b: best_rows(lab, b) for b in ("tp_latency", "tp_bw", "tp_bw_cold", "tp_skew")},
        overlap(lab),
    )
