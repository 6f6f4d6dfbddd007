# SPDX-License-Identifier: BSD-3-Clause
"""The guided search of one communicator size (`mpiscope tune --search guided`):
every algorithm's counterpart simulated at every cell from the machine's
point-to-point costs first (sim_prior.py; one without stands in as the
default, or as the fastest simulated, corrected by its own measured cells);
then, one size per collective a round, the size the corrected simulation is
least sure of is measured: the default first, then the algorithms whose
expected gain beyond a verdict's bar exceeds the noise threshold (expected_loss, with the
learned error), a batch at a time; each batch corrects the simulation, until every size is
measured or settled by the same rule. A collective with no simulated
algorithm follows the adaptive rules (search.py). Method: docs/explanation/tuner.md."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from mpiscope.mpilibs.algorithm_catalog import DEFAULT
from mpiscope.stats.launch_compare import log_medians
from mpiscope.tune.adaptive import Search
from mpiscope.tune.readings import representatives
from mpiscope.tune.search import lower_bound
from mpiscope.tune.sim_prior import Correction, counterpart, simulator, stand_in

# Contenders measured at a time at one size: once the default and the likeliest
# winners are measured, the spread of their own parts (sim_prior.Correction.spread)
# says whether the rest can still win.
BATCH = 3


def expected_loss(mean: float, error: float) -> float:
    """E[max(0, X)] for X normal with `mean` and standard deviation `error`
    (in log): what a decision taken without measuring loses on average,
    where X is how far an algorithm left out would beat it."""
    if error <= 0:
        return max(0.0, mean)
    z = mean / error
    return error * float(norm.pdf(z)) + mean * float(norm.cdf(z))


class Guided(Search):
    """The guided search; `simulate` (coll, our algorithm, p, size) ->
    seconds, from cfg.sim_costs unless set before run()."""

    def __init__(self, cfg, measured, decisions, say=print, model_names=None):
        super().__init__(cfg, measured, decisions, say, model_names)
        self.simulate = simulator(cfg.sim_costs) if cfg.sim_costs is not None else None
        self.corrections = {c: Correction(-math.log(1 - cfg.noise)) for c in cfg.collectives}
        self.simulated = {c: {} for c in cfg.collectives}  # {(size, name): seconds}
        self.unsimulated = {c: [] for c in cfg.collectives}  # names without a counterpart of ours
        self.predicted = {c: {} for c in cfg.collectives}  # {size: winner}, sizes not measured
        self.counterparts = {}  # sim_prior.COUNTERPARTS' entry for the library

    def run(self, weights: dict, reading):
        cfg = self.cfg
        self.default_runs = reading.default_runs
        self.measured.launches_of = representatives(reading.default_runs, reading.runs_as)
        self._simulate_all()
        for c in cfg.collectives:
            if self.unsimulated[c]:
                self.say(
                    f"{c}: {', '.join(self.unsimulated[c])} have no simulated counterpart: "
                    "each stands in as the default, corrected by its own measured cells"
                )
        heavy = {c: {s for s, calls in weights.get(c, {}).items() if calls > 0} for c in cfg.collectives}
        while True:
            points = {}
            for c in cfg.collectives:
                open_ = [s for s in cfg.sizes_of(c) if s not in self._measured_sizes(c)]
                must = sorted(heavy[c] & set(open_))
                unsettled = must or [s for s in open_ if not self._settled(c, s)]
                if unsettled:
                    at = must or [min(unsettled, key=lambda s: self._doubt(c, s))]
                    points[c] = {s: self._contenders(c, s) for s in at}
            if not points:
                break
            self.say("guided: " + "; ".join(f"{c} at {', '.join(map(str, by))} B" for c, by in points.items()))
            self._measure_round(points)
        for c in cfg.collectives:
            for s in cfg.sizes_of(c):
                if s not in self._measured_sizes(c):
                    self.predicted[c][s] = self.decisions.winners[(c, s)] = self._winner(c, s)

    def _measure_round(self, points: dict):
        """points {collective: {size: contenders}}: the default first, then
        the contenders still in, BATCH at a time, those with the most to
        gain first, each where the adaptive rule says it could win
        (Search._measure_points); every batch corrects the simulation before
        the next is chosen."""
        before = {c: set(self.measured.cells[c]) for c in points}
        self.measure({c: {DEFAULT: set(by)} for c, by in points.items()})
        for c in points:
            self._learn(c, self.measured.cells[c] - before[c] - self.measured.inferred[c])
        while batch := self._next_batch(points):
            before = {c: set(self.measured.cells[c]) for c in batch}
            judged = sum(len(self.out_of_reach[c]) for c in batch)
            self._measure_points(batch)
            for c in batch:
                self._learn(c, self.measured.cells[c] - before[c] - self.measured.inferred[c])
            if all(self.measured.cells[c] == before[c] for c in batch) and judged == sum(
                len(self.out_of_reach[c]) for c in batch
            ):
                break  # nothing measured nor left out: the same batch would come again

    def _next_batch(self, points: dict) -> dict:
        """{collective: {size: [default, up to BATCH contenders]}}: those not
        measured yet, by expected loss against the measured default."""
        out = {}
        for c, by in points.items():
            for s in by:
                done = self.measured.cells[c] | self.out_of_reach[c].keys()
                left = [n for n in self._contenders(c, s) if n != DEFAULT and (s, n) not in done]
                if left:
                    out.setdefault(c, {})[s] = [DEFAULT] + sorted(left, key=lambda n: -self._gain(c, s, n))[:BATCH]
        return out

    def _gain(self, c, s, n) -> float:
        """What leaving `n` out at s loses on average (expected_loss, with the
        learned errors) beyond the margin a verdict needs (_margin) against
        the default: its median where it is measured at s, else its
        prediction, else the predicted best; inf without a prediction of `n`."""
        g = self._guess(c, s, n)
        if g is None:
            return math.inf
        d = self._guess(c, s, DEFAULT)
        measured = self.measured.samples.median(c, DEFAULT, s) if (s, DEFAULT) in self.measured.cells[c] else None
        if measured:
            d = (math.log(measured), 0.0, 0.0)
        if d:
            ref, err = d[0] - self._margin(c, s), d[2]
        else:
            best = self._best(c, s)
            ref, err = best[1], best[3]
        return expected_loss(ref - g[0], math.hypot(g[2], err))

    # ----------------------------------------------------------- the model

    def _simulate_all(self):
        """Every algorithm with a counterpart at every cell, the default
        where it is read to run one of those; every other one as the
        default, or the default too as the fastest (sim_prior.stand_in)."""
        if self.simulate is None:
            raise ValueError("the guided search needs the machine's point-to-point costs")
        p = self.measured.plan.np
        for c in self.cfg.collectives:
            for n in self.measured.names[c]:
                if n != DEFAULT and counterpart(c, n, self.model_names, self.counterparts) is None:
                    self.unsimulated[c].append(n)
            for s in self.cfg.sizes_of(c):
                for n in self.measured.names[c]:
                    ours = counterpart(c, self._runs(c, s, n), self.model_names, self.counterparts)
                    if ours is not None:
                        self.simulated[c][(s, n)] = self.simulate(c, ours, p, s)
                like = stand_in(
                    self.simulated[c].get((s, DEFAULT)), [t for (x, _), t in self.simulated[c].items() if x == s]
                )
                if like is not None:
                    for n in self.measured.names[c]:
                        if (s, n) not in self.simulated[c]:
                            self.corrections[c].stand_ins.add(n)
                            self.simulated[c][(s, n)] = like

    def _runs(self, c, s, n):
        """The library algorithm `n` runs at the cell (the default: the one
        read to run there, or None)."""
        return (self.default_runs.get((c, s)) or (None,))[0] if n == DEFAULT else n

    def _measured_sizes(self, c) -> set:
        return {s for s, n in self.measured.cells[c] if n == DEFAULT}

    def _learn(self, c, cells):
        by_size = {}
        for s, n in sorted(cells):  # in one order whatever the hash seed: the fit sums in it
            t = self.simulated[c].get((s, n))
            if t is not None:
                by_size.setdefault(s, {})[n] = (t, self.measured.samples.median(c, n, s))
        for s in sorted(by_size):
            self.corrections[c].learn(s, by_size[s])

    def _guess(self, c, s, n):
        """(log seconds predicted, learned error there, learned error of a
        comparison at one size) or None."""
        t = self.simulated[c].get((s, n))
        if t is None or t <= 0:
            return None
        corr = self.corrections[c]
        return corr.predict(n, s, t), corr.spread(n, s), corr.spread(n, s, relative=True)

    def _rivals(self, c, s) -> list:
        """The algorithms that decide the cell: one per code run there (an
        algorithm the default runs exactly is the default)."""
        seen, out = set(), []
        for n in self.measured.names[c]:
            r = self.measured.launches_of.get((c, s, n), n)
            if r not in seen and not self._refused(c, n):
                seen.add(r)
                out.append(n)
        return out

    def _best(self, c, s):
        """(name, log seconds, error, error in a comparison) of the predicted
        fastest, or None."""
        guesses = [(n, *g) for n in self._rivals(c, s) for g in [self._guess(c, s, n)] if g]
        return min(guesses, key=lambda x: x[1]) if guesses else None

    def _distances(self, c, s) -> list:
        """Per rival of the predicted best: (how far behind it is, in log,
        the default's margin on its side; the error of that), (-inf, 1)
        where it cannot be told: the default not simulated, an algorithm
        without counterpart and no lower bound above the best."""
        best = self._best(c, s)
        if best is None or self._guess(c, s, DEFAULT) is None:
            return [(-math.inf, 1.0)]
        b, lb, eb, rb = best
        out = []
        for n in self._rivals(c, s):
            if n == b:
                continue
            g = self._guess(c, s, n)
            if g is not None:
                # the default keeps a cell unless beaten beyond the margin a verdict needs
                margin = self._margin(c, s)
                shift = margin if b == DEFAULT else -margin if n == DEFAULT else 0.0
                out.append((g[0] - lb + shift, math.hypot(g[2], rb)))
            else:
                floor = self._floor(c, s, n)
                out.append((-math.inf, 1.0) if floor is None else (floor - lb, eb))
        return out

    def _gaps(self, c, s) -> list:
        """Per rival of the predicted best: its distance in learned errors."""
        return [d / e for d, e in self._distances(c, s)]

    def _losses(self, c, s) -> list:
        """Per rival of the predicted best: what taking the prediction
        without measuring loses on average (expected_loss), inf where the
        rival cannot be told."""
        return [math.inf if d == -math.inf else expected_loss(-d, e) for d, e in self._distances(c, s)]

    def _margin(self, c, s) -> float:
        """How much faster than the default (in log) an algorithm must be at
        s for decide.judge to say so: the noise, and the half-width of the
        interval the default's launches give at the measured size nearest s
        (Bonferroni over the algorithms, as decide.py tests them). A rival
        within it is a tie that the exhaustive search leaves to the default."""
        noise = -math.log(1 - self.cfg.noise)
        at = self._measured_sizes(c)
        if not at:
            return noise
        near = min(sorted(at), key=lambda x: abs(math.log2(max(x, 1) / max(s, 1))))  # a tie: the smaller
        ld = log_medians(self.measured.samples.launches(c, DEFAULT, near))
        if len(ld) < 2:
            return noise
        k = max(1, len(self.measured.names[c]) - 1)
        z = norm.ppf(1 - self.cfg.alpha / k / 2)
        return noise + z * float(np.std(ld, ddof=1)) * math.sqrt(2 / len(ld))

    def _floor(self, c, s, n):
        """What the adaptive search's rules say `n` (no counterpart) cannot
        beat at s, in log seconds, or None: its lower bound from the
        neighbouring measured sizes (search.lower_bound), or its cost-model
        fit (model_fits.py) less the --model-prune margin and the fit's
        residual, the larger."""
        m = self.measured
        at = m.sizes_with(c, n)
        below = max((x for x in at if x < s), default=None)
        above = min((x for x in at if x > s), default=None)
        floors = [lower_bound(m.samples, c, s, n, below, above)]
        if self.cfg.model_prune is not None:
            f = self.fit_near(c, s, n)
            if f is not None and f.predict(s) > 0:
                floors.append(math.log(f.predict(s) / ((1 + self.cfg.model_prune) * (1 + f.residual))))
        return max((x for x in floors if x is not None), default=None)

    def _settled(self, c, s) -> bool:
        return all(loss <= self._tolerance(c, s) for loss in self._losses(c, s))

    def _tolerance(self, c, s) -> float:
        """What a decision may lose on average without measuring: the noise
        threshold (--noise), the least difference the tune counts. Not the
        verdict's bar: where the default's launches spread widely that bar is
        wide, and an algorithm the simulation places wrongly would be left
        out however much faster it runs."""
        return -math.log(1 - self.cfg.noise)

    def _doubt(self, c, s) -> tuple:
        """The order sizes are measured in: the smallest gap first, lowered by
        one where the predicted best differs at a neighbouring size (a
        crossover); then the farthest from any measured size; then the
        nearest the grid's middle."""
        sizes = self.cfg.sizes_of(c)
        i = sizes.index(s)
        best = self._best(c, s)
        cross = any(
            0 <= j < len(sizes) and best and (self._best(c, sizes[j]) or (None,))[0] != best[0] for j in (i - 1, i + 1)
        )
        measured = self._measured_sizes(c)
        far = min((abs(math.log2(max(s, 1) / max(m, 1))) for m in measured), default=math.inf)
        return min(self._gaps(c, s), default=math.inf) - cross, -far, abs(i - len(sizes) // 2)

    def _contenders(self, c, s) -> list:
        """The default, and the algorithms whose expected gain (_gain)
        exceeds the tolerance (without any prediction: its floor against the
        best; the adaptive rule then leaves out those out of reach)."""
        best = self._best(c, s)
        out = []
        for n in self.measured.names[c]:
            g = self._guess(c, s, n)
            if self._refused(c, n):
                continue
            if n == DEFAULT or best is None:
                out.append(n)
            elif g is not None:
                if self._gain(c, s, n) > self._tolerance(c, s):
                    out.append(n)
            elif (floor := self._floor(c, s, n)) is None or expected_loss(best[1] - floor, best[2]) > self._tolerance(
                c, s
            ):
                out.append(n)
            else:
                self.model_skipped[c].add((s, n))
        return out

    def _refused(self, c, n) -> bool:
        """Whether every launch forcing `n` failed at every size it was tried
        (not the default): the library refuses it on this communicator
        (MPICH's fallback=error, for a node structure or a count it needs),
        or it hangs. It is neither launched again nor a rival: the
        exhaustive search, launching every size at once, has none of its
        cells either."""
        at = self.measured.sizes_with(c, n)
        return n != DEFAULT and bool(at) and not any(len(self.measured.samples.get(c, n, s)) for s in at)

    def _winner(self, c, s) -> str:
        """The predicted winner of a settled size: the best where it beats
        the default beyond the noise, else the default."""
        b, lb = self._best(c, s)[:2]
        d = self._guess(c, s, DEFAULT)
        if b == DEFAULT or d is None or d[0] - lb <= self._margin(c, s):
            return DEFAULT
        return b
