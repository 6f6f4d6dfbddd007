# SPDX-License-Identifier: BSD-3-Clause
"""What the guided search (guided.py) believes before and between
measurements: each library algorithm that has a counterpart among our own
algorithms (the library's model_names) simulated at every cell from the
machine's point-to-point costs (sim/), and the learned correction of those
simulations: per algorithm the mean log of measured over simulated time at
its measured cells, and the learned error, the spread of what the
corrected simulation predicted against what was then measured. Method:
docs/explanation/tuner.md, "The guided search"."""

from __future__ import annotations

import math

import numpy as np

from mpiscope.models.costmodels import ALGORITHMS

# Before any cell is measured the simulation is trusted within a factor of two.
PRIOR_ERROR = math.log(2)
# The learned error doubles this many octaves of message size away from the
# nearest size an algorithm was measured at: a correction learned at one size
# says less about sizes far from it.
OCTAVES_PER_ERROR = 8


def counterpart(coll: str, name: str, model_names: dict) -> str | None:
    """Our algorithm that simulates the library's `name`, or None."""
    ours = model_names.get(name)
    return ours if ours in ALGORITHMS.get(coll, ()) else None


def simulator(costs):
    """(coll, our algorithm, p, size) -> simulated seconds, with `costs`
    (sim.costs.SimCosts), one replicate: deterministic."""
    from mpiscope.sim.simulate import Extras, algorithm

    def simulate(coll, ours, p, size):
        return algorithm(coll, ours, p, max(1, int(size)), costs, Extras()).median
    return simulate


class Correction:
    """The learned correction of one collective's simulations. `learn`
    takes each measured cell with what was predicted for it just before."""

    def __init__(self, floor: float):
        self.floor = floor          # the learned error is never below the noise
        self.ratios = {}            # name -> {size: log(measured / simulated)}
        self.errors = []            # (corrected: bool, log(measured / predicted))

    def offset(self, name) -> float:
        """log(measured / simulated) expected for `name`: the mean of its own
        measured cells, else of every algorithm's, else 0."""
        own = self.ratios.get(name)
        every = [r for by in self.ratios.values() for r in by.values()]
        if own:
            return float(np.mean(list(own.values())))
        return float(np.mean(every)) if every else 0.0

    def error(self) -> float:
        """The learned error, in log: the root mean square of the prediction
        errors of corrected simulations (the algorithm measured before), two
        or more; else of every prediction error; PRIOR_ERROR before any."""
        corrected = [e for c, e in self.errors if c]
        errors = corrected if len(corrected) >= 2 else [e for _, e in self.errors]
        if not errors:
            return PRIOR_ERROR
        return max(self.floor, math.sqrt(float(np.mean(np.square(errors)))))

    def spread(self, name, size) -> float:
        """The learned error at `size` for `name`, grown with the octaves to
        the nearest size it (else any algorithm) was measured at."""
        at = list(self.ratios.get(name) or {s for by in self.ratios.values() for s in by})
        if not at or size <= 0:
            return self.error()
        octaves = min(abs(math.log2(size / s)) for s in at if s > 0) if any(s > 0 for s in at) else 0
        return self.error() * (1 + octaves / OCTAVES_PER_ERROR)

    def predict(self, name, simulated: float) -> float:
        """log seconds predicted for `name` from its simulated seconds."""
        return math.log(simulated) + self.offset(name)

    def learn(self, name, size, simulated: float, measured: float):
        """A measured cell: its prediction error (before learning from it),
        then its ratio; a cell without samples (its launches failed) teaches
        nothing."""
        if not (simulated and measured and simulated > 0 and measured > 0):
            return
        corrected = bool(self.ratios.get(name))
        self.errors.append((corrected, math.log(measured) - self.predict(name, simulated)))
        self.ratios.setdefault(name, {})[size] = math.log(measured / simulated)
