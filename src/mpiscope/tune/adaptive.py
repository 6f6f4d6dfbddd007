# SPDX-License-Identifier: BSD-3-Clause
"""The search of one communicator size: which cells are measured, in which rounds,
each decided as soon as it is (decide.Decisions).

Exhaustive: every size × every algorithm. Adaptive (search.py says why each step
is sound): the grid's two ends with every algorithm; then each interval between
measured sizes is resolved, has algorithms left out of reach at its ends measured
there, or is split at its middle size (the --coarse grid's first) measured with
the algorithms that could still win. Sizes the application calls (--weights) are
always measured; a cell whose code another configuration runs (tune/readings.py)
takes that one's launches."""

from __future__ import annotations

import math

from mpiscope.mpilibs.algorithm_catalog import DEFAULT
from mpiscope.tune.model_fits import fit, out_of_race
from mpiscope.tune.readings import representatives
from mpiscope.tune.search import Judge, blocking, could_win, default_ahead, lower_bound, resolved, survivors

LOCAL = 4  # measured sizes per cost-model fit (the nearest to the size predicted)


def coarse_grid(sizes: list, step: int) -> list:
    grid = sizes[:: max(1, step)]
    return grid + ([sizes[-1]] if sizes[-1] not in grid else [])


class Search:
    """What the search left unmeasured, and why: per collective the (size,
    name) cells the cost models left out, and those out of reach of a
    verdict there (with the lower bound that said so); the fits it used.
    `model_names`: the library's algorithms that are our cost models
    (mpilibs: model_names)."""

    def __init__(self, cfg, measured, decisions, say=print, model_names=None):
        self.cfg, self.measured, self.decisions, self.say = cfg, measured, decisions, say
        self.model_names = model_names or {}
        self.model_skipped = {c: set() for c in cfg.collectives}
        self.out_of_reach = {c: {} for c in cfg.collectives}
        self.fits = {}  # coll -> {name: [(size predicted, predict.Fit)]}, as the search used them
        self.default_runs = {}  # what the default runs (Reading.default_runs), for _default_holds

    def measure(self, jobs: dict):
        """jobs {collective: {name: sizes}} measured, and their sizes decided."""
        self.measured.measure(jobs)
        for c, by in jobs.items():
            for s in sorted({s for sizes in by.values() for s in sizes}):
                self.decisions.decide(c, s)

    def run(self, weights: dict, reading):
        """`weights` {collective: {size: calls}} (tuner.Tuner.set_weights);
        `reading`: what the default runs (mpilibs.library.Reading)."""
        cfg, names, winners = self.cfg, self.measured.names, self.decisions.winners
        if not cfg.adaptive:
            self.say("every size × every algorithm")
            self.measure({c: {n: cfg.sizes_of(c) for n in names[c]} for c in cfg.collectives})
            return
        fine = {c: cfg.sizes_of(c) for c in cfg.collectives}
        self.default_runs = reading.default_runs
        self.measured.launches_of = representatives(reading.default_runs, reading.runs_as)
        models = cfg.model_prune is not None
        ends = {c: sorted({f[0], f[-1]}) for c, f in fine.items()}
        # with the cost models: the middle size too, so that each fit has a residual
        middle = {c: [f[len(f) // 2]] for c, f in fine.items() if models and f[len(f) // 2] not in ends[c]}
        self.say("pass 1: the grid's ends × every algorithm" + ("; its middle, the default first" if models else ""))
        self.measure({c: {n: ends[c] for n in names[c]} for c in cfg.collectives})
        self._measure_points({c: {m: names[c] for m in mids} for c, mids in middle.items()})
        judges = {
            c: Judge(self.measured.samples, c, self.decisions.rng, cfg.alpha, bounds=self.out_of_reach[c])
            for c in cfg.collectives
        }
        pending = {
            c: list(zip(e, e[1:]))
            for c in cfg.collectives
            for e in [sorted(set(ends[c]) | set(middle.get(c, [])))]
            if len(e) > 1
        }
        first = True
        while pending:
            points, nxt, unblock = {}, {}, {}
            for c, intervals in pending.items():
                heavy = {s for s, calls in weights.get(c, {}).items() if calls > 0}
                considered = self.measured.cells[c] | self.out_of_reach[c].keys()
                for lo, hi in intervals:
                    between = [s for s in fine[c] if lo < s < hi]
                    if not between:
                        continue
                    keep = survivors(judges[c], lo, hi, names[c], considered, cfg.prune)
                    must = sorted(heavy & set(between))
                    if not must and (
                        resolved(judges[c], lo, hi, self.decisions.of(c), keep, cfg.noise)
                        or self._default_holds(c, lo, hi, between, keep)
                    ):
                        for s in between:
                            winners[(c, s)] = winners[(c, lo)]
                        continue
                    cells = [] if must else blocking(judges[c], lo, hi, self.decisions.of(c), keep, cfg.noise)
                    if cells:  # measure those at the ends, and look at the interval again
                        for s, n in cells:
                            unblock.setdefault(c, {}).setdefault(n, set()).add(s)
                        nxt.setdefault(c, []).append((lo, hi))
                        continue
                    grid = [s for s in coarse_grid(fine[c], cfg.coarse) if lo < s < hi] if first and cfg.coarse else []
                    at = sorted(set(grid or [between[len(between) // 2]]) | set(must))
                    for s in at:
                        out = out_of_race(self._fits(c, s, keep), s, cfg.model_prune) if models else set()
                        self.model_skipped[c] |= {(s, n) for n in out}
                        points.setdefault(c, {})[s] = [n for n in keep if n not in out]
                    cuts = [lo] + at + [hi]
                    nxt.setdefault(c, []).extend(zip(cuts, cuts[1:]))
            if not points and not unblock:
                break
            for c, by in unblock.items():
                for n, sizes in by.items():
                    for s in sizes:
                        del self.out_of_reach[c][(s, n)]
            self.say(
                "pass: "
                + "; ".join(f"{c} {len(by)} sizes" for c, by in points.items())
                + "".join(f"; {c} {sum(map(len, by.values()))} left out, to resolve" for c, by in unblock.items())
            )
            self.measure(unblock)
            self._measure_points(points)
            pending, first = nxt, False

    def _default_holds(self, c, lo, hi, between, keep) -> bool:
        """The default won at lo and hi, runs one algorithm exactly as forced
        from lo to hi (default_runs), and every algorithm still in is behind
        it at both ends (search.default_ahead)."""
        sizes = [lo, *between, hi]
        runs = {self.default_runs.get((c, s)) for s in sizes}
        winners, launches_of = self.decisions.winners, self.measured.launches_of
        # an algorithm running the default's code at every size is the default
        others = [n for n in keep if any(launches_of.get((c, s, n)) != DEFAULT for s in sizes)]
        return (
            winners.get((c, lo)) == DEFAULT == winners.get((c, hi))
            and len(runs) == 1
            and next(iter(runs)) is not None
            and next(iter(runs))[1]
            and default_ahead(self.measured.samples, c, (lo, hi), others, self.out_of_reach[c], self.cfg.noise)
        )

    def _measure_points(self, points: dict):
        """points {collective: {size: names}}: the default first at every size,
        then each other algorithm where it could still win (search.could_win,
        against its own launches at the nearest sizes measured)."""
        cfg, m = self.cfg, self.measured
        self.measure({c: {DEFAULT: set(by)} for c, by in points.items() if by})
        jobs = {}
        for c, by in points.items():
            for s, names in by.items():
                for n in names:
                    if n == DEFAULT or (s, n) in m.cells[c]:
                        continue
                    at = m.sizes_with(c, n)
                    below = max((x for x in at if x < s), default=None)
                    above = min((x for x in at if x > s), default=None)
                    bound = lower_bound(m.samples, c, s, n, below, above)
                    if not could_win(m.samples, c, s, bound, cfg.repeat, len(m.names[c]) - 1, cfg.alpha, cfg.noise):
                        self.out_of_reach[c][(s, n)] = bound
                    else:
                        jobs.setdefault(c, {}).setdefault(n, set()).add(s)
        if jobs:
            self.measure(jobs)

    def _fits(self, coll, size, names) -> dict:
        """Each algorithm's cost model fitted to its medians at the LOCAL measured
        sizes nearest to `size` (in ratio; model_fits.py): what is not affine over
        the whole grid (protocol switches) shows in the residual only where it
        happens. Kept in self.fits for the result."""
        out = {}
        for n in names:
            f = None if n == DEFAULT else self.fit_near(coll, size, n)
            if f is not None:
                out[n] = f
                self.fits.setdefault(coll, {}).setdefault(n, []).append((size, f))
        return out

    def fit_near(self, coll, size, name):
        """`name`'s cost model fitted at the LOCAL measured sizes nearest to
        `size`, or None (model_fits.fit)."""
        m = self.measured
        near = sorted(m.sizes_with(coll, name), key=lambda s: abs(math.log(s / size)) if s > 0 else math.inf)[:LOCAL]
        return fit(coll, name, m.plan.np, {s: m.samples.median(coll, name, s) for s in near}, self.model_names)
