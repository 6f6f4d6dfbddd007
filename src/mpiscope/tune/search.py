# SPDX-License-Identifier: BSD-3-Clause
"""The adaptive search's judgements on measured cells (adaptive.Search
drives the rounds):

- Prune: an algorithm A is left out between two measured sizes lo < hi when
  one algorithm C is faster than A beyond a wide margin (`prune`, 10%) at
  both ends — decide.judge's verdict with that margin (over launches: the t
  test and interval of launch medians beyond the margin and C faster in
  every launch; with one launch, compare's on the pooled samples). Why that holds in
  between: at a fixed communicator size every algorithm's cost is affine in
  the message size n (Hockney: a·α + n·b·β, our cost models), so t_A − t_C is
  affine and positive at both ends means positive between; the margin
  allows for what is not affine (protocol switches). The library's default
  is never left out (every decision is against it) and never leaves another
  out: it switches algorithms by size, so it is not affine.
- Resolved: between lo and hi nothing needs measuring when the winner is the
  same at both ends and beats every other algorithm still in at both ends
  (the same verdict at the noise threshold): by the same affinity it beats
  them between, and its ratio to the default, monotone in n, stays beyond
  noise. Where the default won at both ends, it is resolved when the
  default runs the same as one algorithm X at both ends (neither faster
  beyond noise) and X beats every other algorithm still in at both ends:
  the library's own change-overs rise with the size, so the default is X
  between as well, and X beats the others there. Where the default won at
  both ends and is known to run one algorithm exactly throughout (read
  under gdb, mpilibs/ompi_defaults.py), it is also resolved when every algorithm
  still in is slower than the default at both ends, or within noise of it,
  in the means of the launches (default_ahead): by the same affinity it is
  between. On replays of two exhaustive 8-rank tunes of nine collectives
  (bench/tune_search_replay.py) this takes the cells measured from 42% to
  38% and loses no decision; a plainer bound, the default's slowest launch
  against each algorithm's fastest, seldom holds where launches spread.
  Otherwise (the winner changes, the default is not the same algorithm at
  both ends, or the intervals of the winner and another algorithm overlap
  at an end) the sizes between are measured.

- Out of reach (could_win): at a size about to be measured, the default is
  measured first; an algorithm is not measured there when a lower bound on
  its time from its fastest launch at the nearest measured sizes could not
  give it the speedup over the default's launches that a verdict "faster"
  needs with the launch spread the default shows there. Two bounds, the
  larger counts: a collective's time does not fall as its messages grow
  (from the nearest smaller size lo: t(s) >= t(lo)), and its time per byte
  does not grow (from the nearest larger size hi: t(s) >= t(hi)·s/hi, less
  PER_BYTE_SLACK; true of any a + b·n with a, b >= 0 and of the overlapped
  max(a, b·n)). A protocol switch between s and hi (eager to rendezvous)
  can make the time per byte grow more: on replays of three exhaustive
  8-rank tunes (bench/tune_search_replay.py), the second bound takes the
  cells measured from 56-58% to 47-48% and costs 1-2 of 52 decisions each.
  The first bound is what makes the small sizes cheap on a noisy machine:
  where one configuration's launches differ by 10×, no algorithm can be
  told faster, and only the default is measured. Unlike the prunes above
  it says nothing of the next sizes: the algorithm stays in the race there.
  At an end of an interval, an algorithm out of reach is beaten
  (Judge.faster) when every launch of the other is below its bound by the
  margin; where such an algorithm alone keeps the interval from being
  resolved (`blocking`), it is measured at that end and the interval
  looked at again, rather than every size between.

The cost models' own pruning (predict.py: an algorithm predicted out of the
race at the size about to be measured) is applied by adaptive.Search on top.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from mpiscope.stats.compare import FASTER
from mpiscope.stats.launch_compare import log_medians
from mpiscope.tune.decide import judge
from mpiscope.mpilibs.catalog import DEFAULT


# How much an algorithm's time per byte may grow from one measured size to
# the next larger one before the bound from above fails: in exhaustive tunes
# it does grow between some neighbouring sizes, and without the slack the
# replays of exhaustive tunes (bench/tune_search_replay.py) lose decisions
# that measuring every cell makes (docs/explanation/tuner.md).
PER_BYTE_SLACK = 0.10


class Judge:
    """decide.judge's verdict between two algorithms at a measured size (over
    launches when there are two or more), cached. Against an algorithm left
    out of reach at the size (`bounds` {(size, name): lower_bound}), a is
    faster beyond the margin when every launch of a is, below the bound."""

    def __init__(self, samples, coll, rng, alpha, n_boot=500, bounds=None):
        self.samples, self.coll, self.rng, self.alpha, self.n_boot = samples, coll, rng, alpha, n_boot
        self.bounds = {} if bounds is None else bounds
        self.hopeful = False   # every algorithm out of reach counts as beaten (blocking)
        self._cache = {}

    def faster(self, size, a, b, margin) -> bool:
        """a faster than b at `size` beyond `margin`."""
        key = (size, a, b, margin)
        if (size, b) in self.bounds:
            la = log_medians(self.samples.launches(self.coll, a, size))
            return self.hopeful or (len(la) >= 2 and
                                    float(la.max()) < self.bounds[(size, b)] + math.log(1 - margin))
        if key not in self._cache:
            va, vb = self.samples.get(self.coll, a, size), self.samples.get(self.coll, b, size)
            ok = len(va) >= 2 and len(vb) >= 2
            self._cache[key] = ok and judge(self.samples, self.coll, size, b, a, self.rng, margin,
                                            self.alpha, self.n_boot)[2] == FASTER
        return self._cache[key]


def survivors(judge: Judge, lo, hi, names, considered, prune) -> list:
    """The algorithms of `names` considered at lo and hi (measured, or out of
    reach there) and not left out between them."""
    at = [n for n in names if (lo, n) in considered and (hi, n) in considered]
    return [a for a in at if a == DEFAULT or not any(
        judge.faster(lo, c, a, prune) and judge.faster(hi, c, a, prune)
        for c in at if c not in (a, DEFAULT))]


def _beats_all(judge, lo, hi, w, keep, noise) -> bool:
    return all(judge.faster(lo, w, x, noise) and judge.faster(hi, w, x, noise)
               for x in keep if x not in (w, DEFAULT))


def resolved(judge: Judge, lo, hi, winners, keep, noise) -> bool:
    w = winners[lo]
    if w != winners[hi]:
        return False
    if w != DEFAULT:
        return _beats_all(judge, lo, hi, w, keep, noise)
    same = [x for x in keep if x != DEFAULT and not any(
        judge.faster(s, a, b, noise) for s in (lo, hi) for a, b in ((x, DEFAULT), (DEFAULT, x)))]
    return any(_beats_all(judge, lo, hi, x, keep, noise) for x in same)


def lower_bound(samples, coll, size, name, below, above):
    """A lower bound on the log of `name`'s launch medians at `size` from its
    fastest launch at `below` < size (time does not fall as messages grow)
    and at `above` > size scaled by size / above (time per byte does not
    grow, less PER_BYTE_SLACK), the larger; None without either (either
    None: not measured there)."""
    bounds = []
    for at, scale in ((below, 1.0),
                      (above, size / above * (1 - PER_BYTE_SLACK) if above else None)):
        lx = log_medians(samples.launches(coll, name, at)) if at is not None else []
        if len(lx):
            bounds.append(float(lx.min()) + math.log(scale))
    return max(bounds, default=None)


def blocking(judge: Judge, lo, hi, winners, keep, noise) -> list:
    """The (size, name) left out of reach at lo or hi that alone keep the
    interval from being resolved: measured there, it may be."""
    out = [(s, n) for s in (lo, hi) for n in keep if (s, n) in judge.bounds]
    judge.hopeful = True
    try:
        return out if out and resolved(judge, lo, hi, winners, keep, noise) else []
    finally:
        judge.hopeful = False


def could_win(samples, coll, size, bound, launches, family, alpha, noise) -> bool:
    """Whether an algorithm whose launch medians at `size` are no smaller
    than exp(bound) (lower_bound), measured in `launches` launches, could be
    judged faster than the default there (decide.judge over launches), given
    the default's launches at `size`. A verdict needs p < alpha / family and
    the interval's upper end below 1 - noise, with a launch variance no
    smaller than the default's sum of squares over both sides' degrees of
    freedom, and a t quantile no smaller than the normal's. True when that
    cannot be told (too few launches, no bound)."""
    ld = log_medians(samples.launches(coll, DEFAULT, size))
    if len(ld) < 2 or bound is None or launches < 2:
        return True
    var = float(np.sum((ld - ld.mean()) ** 2)) / (len(ld) + launches - 2)
    se = math.sqrt(var * (1 / len(ld) + 1 / launches))
    need = max(norm.ppf(1 - alpha / family / 2) * se, -math.log(1 - noise) + norm.ppf(0.975) * se)
    return float(ld.mean() - bound) > need


def default_ahead(samples, coll, ends, names, bounds, noise) -> bool:
    """Whether at each size of `ends` every algorithm of `names` is slower
    than the default's launches, or within `noise` of them: its mean log
    launch median (or its lower bound where it was out of reach, `bounds`)
    at least log(1 - noise) above the default's. Where the default runs one
    algorithm A exactly between the ends (the caller knows), t_x - (1 -
    noise)·t_A is affine in the size and not negative at both ends, so not
    between: a verdict "faster" there (its interval below 1 - noise) would
    be a false alarm."""
    for at in ends:
        ld = log_medians(samples.launches(coll, DEFAULT, at))
        if not len(ld):
            return False
        for name in names:
            if name == DEFAULT:
                continue
            lx = log_medians(samples.launches(coll, name, at))
            mean = float(lx.mean()) if len(lx) else bounds.get((at, name))
            if mean is None or mean - float(ld.mean()) < math.log(1 - noise):
                return False
    return True
