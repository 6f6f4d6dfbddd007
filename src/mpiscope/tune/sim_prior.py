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
# An algorithm not measured yet borrows how far the measured ones' own parts
# spread once this many simulated algorithms (not stand-ins) are measured.
OWN_PARTS_KNOWN = 3
# The learned error doubles this many octaves of message size away from the
# nearest size an algorithm was measured at: a correction learned at one size
# says less about sizes far from it.
OCTAVES_PER_ERROR = 8


# Library algorithms the catalog does not name as ours, by library and
# collective, with the algorithm of ours each is simulated as; exact or
# approximate as said (docs/explanation/tuner.md, "Counterparts"), or None
# for one the catalog names that is not simulated. The learned correction's
# part per algorithm takes up what an approximate one misses.
COUNTERPARTS = {
    "openmpi": {
        "allreduce": {
            # forced with segment size 0 (coll_tuned's default) it runs the plain ring: exact
            "segmented_ring": "ring",
            # a linear reduce to the root, then a linear bcast: exact at p = 2, else approximate
            "basic_linear": "fan_in_fan_out",
            # the library's own reduce, then its own bcast: approximate
            "nonoverlapping": "fan_in_fan_out",
        },
        "bcast": {
            # the two halves down a binary tree, then swapped between the subtrees: approximate
            "split_binary_tree": "scatter_allgather_recursive_doubling",
            # unsegmented: at p <= 4 a binomial tree's messages in its order, else approximate
            "binary_tree": "binomial",
            # our linear bcast runs its messages exactly, yet simulated as it the stored
            # tunes' replay measures more cells (known-limitations.md): none
            "basic_linear": None,
        },
    },
}


def counterpart(coll: str, name: str, model_names: dict, more: dict | None = None) -> str | None:
    """Our algorithm that simulates the library's `name`: COUNTERPARTS' (`more`:
    the library's entry; None there: none), else the catalog's (`model_names`),
    or None."""
    entry = (more or {}).get(coll, {})
    ours = entry[name] if name in entry else model_names.get(name)
    return ours if ours in ALGORITHMS.get(coll, ()) else None


def stand_in(default, simulated: list):
    """What an algorithm without a counterpart is simulated as at a size: the
    default's simulated time (the library's own choice there), else the
    fastest simulated there (None without any). Its own correction, learned
    from its measured cells as any algorithm's, says how far it is from that:
    its measured ratio to the default at the nearest sizes, where it stands
    in as the default."""
    return default if default is not None else min(simulated, default=None)


def simulator(costs):
    """(coll, our algorithm, p, size) -> simulated seconds, with `costs`
    (sim.costs.SimCosts), one replicate: deterministic."""
    from mpiscope.sim.simulate import Extras, algorithm

    def simulate(coll, ours, p, size):
        return algorithm(coll, ours, p, max(1, int(size)), costs, Extras()).median

    return simulate


class Correction:
    """The learned correction of one collective's simulations: log(measured /
    simulated) = own(algorithm) + shift(size), fitted by least squares to the
    measured cells (alternating means). The shift is what the point-to-point
    costs miss for every algorithm at a size (it cancels when two algorithms
    are compared at one size); between measured sizes it is interpolated in
    log size, beyond them the nearest one's. `learn` takes the cells measured
    at one size with what was predicted for them just before: their errors,
    and the errors relative to their mean, are the learned errors."""

    def __init__(self, floor: float):
        self.floor = floor  # the learned error is never below the noise
        self.stand_ins = set()  # names simulated as another algorithm (stand_in): their own part is no simulation's
        self.ratios = {}  # name -> {size: log(measured / simulated)}
        self.errors = []  # (corrected, log(measured / predicted), less the size's mean or None)
        self.own, self.shift = {}, {}

    def _fit(self, rounds: int = 50):
        own = {n: 0.0 for n in self.ratios}
        sizes = {s for by in self.ratios.values() for s in by}
        shift = {}
        for _ in range(rounds):
            shift = {s: float(np.mean([by[s] - own[n] for n, by in self.ratios.items() if s in by])) for s in sizes}
            own = {n: float(np.mean([r - shift[s] for s, r in by.items()])) for n, by in self.ratios.items()}
        self.own, self.shift = own, shift

    def shift_at(self, size) -> float:
        if not self.shift:
            return 0.0
        at = sorted(self.shift)
        x = math.log2(max(size, 1))
        xs = [math.log2(max(s, 1)) for s in at]
        return float(np.interp(x, xs, [self.shift[s] for s in at]))

    def offset(self, name, size) -> float:
        """log(measured / simulated) expected for `name` at `size`: its own
        part (an algorithm not measured: the mean of the others') and the
        size's shift; 0 before any cell."""
        own = self.own.get(name, float(np.mean(list(self.own.values()))) if self.own else 0.0)
        return own + self.shift_at(size)

    def error(self, relative: bool = False) -> float:
        """The learned error, in log: the root mean square of the prediction
        errors of corrected simulations (the algorithm measured before), two
        or more; else of every prediction error; PRIOR_ERROR before any.
        `relative`: of the errors less their size's mean, which is what
        decides between two algorithms at one size (the absolute errors
        until there are such)."""
        pick = (lambda x: x[2]) if relative else (lambda x: x[1])
        known = [x for x in self.errors if pick(x) is not None]
        if relative and not known:
            return self.error()
        corrected = [pick(x) for x in known if x[0]]
        errors = corrected if len(corrected) >= 2 else [pick(x) for x in known]
        if not errors:
            return PRIOR_ERROR
        return max(self.floor, math.sqrt(float(np.mean(np.square(errors)))))

    def spread(self, name, size, relative: bool = False) -> float:
        """The learned error at `size` for `name`, grown with the octaves to
        the nearest size it was measured at; before it was measured anywhere,
        the spread of the measured simulated algorithms' own parts combined
        with the learned error (its own part is one more drawn from theirs),
        PRIOR_ERROR at least until OWN_PARTS_KNOWN are measured."""
        at = list(self.ratios.get(name) or ())
        if not at:
            owns = [v for n, v in self.own.items() if n not in self.stand_ins]
            if len(owns) < OWN_PARTS_KNOWN:
                return max(PRIOR_ERROR, self.error(relative))
            return max(self.floor, math.hypot(float(np.std(owns, ddof=1)), self.error(relative)))
        err = self.error(relative)
        octaves = min(abs(math.log2(max(size, 1) / max(s, 1))) for s in at)
        return err * (1 + octaves / OCTAVES_PER_ERROR)

    def predict(self, name, size, simulated: float) -> float:
        """log seconds predicted for `name` at `size` from its simulated seconds."""
        return math.log(simulated) + self.offset(name, size)

    def learn(self, size, cells: dict):
        """The cells measured at `size`, {name: (simulated, measured
        seconds)}: their prediction errors (before learning from them), then
        their ratios; a cell without samples (its launches failed) teaches
        nothing."""
        ok = {n: (t, m) for n, (t, m) in cells.items() if t and m and t > 0 and m > 0}
        errs = {n: math.log(m) - self.predict(n, size, t) for n, (t, m) in ok.items()}
        mean = float(np.mean(list(errs.values()))) if len(errs) >= 2 else None
        for n, e in errs.items():
            self.errors.append((bool(self.ratios.get(n)), e, None if mean is None else e - mean))
        for n, (t, m) in ok.items():
            self.ratios.setdefault(n, {})[size] = math.log(m / t)
        if ok:
            self._fit()
