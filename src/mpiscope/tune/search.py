# SPDX-License-Identifier: BSD-3-Clause
"""The adaptive search's judgements on measured cells (adaptive.Search drives
the rounds). Each rests on an algorithm's cost being affine in the message
size at a fixed communicator size: an algorithm beaten beyond `prune` at both
ends of an interval is left out between; an interval whose winner beats
every algorithm still in at both ends is resolved (`default_ahead` where the
default is known to run one algorithm throughout); an algorithm whose lower
bound cannot win at a size is not measured there (`could_win`, with
PER_BYTE_SLACK). Why each holds: docs/explanation/tuner.md, "The adaptive
search"."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from mpiscope.stats.compare import FASTER
from mpiscope.stats.launch_compare import log_medians
from mpiscope.tune.decide import judge
from mpiscope.mpilibs.algorithm_catalog import DEFAULT


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
        self.hopeful = False  # every algorithm out of reach counts as beaten (blocking)
        self._cache = {}

    def faster(self, size, a, b, margin) -> bool:
        """a faster than b at `size` beyond `margin`."""
        key = (size, a, b, margin)
        if (size, b) in self.bounds:
            la = log_medians(self.samples.launches(self.coll, a, size))
            return self.hopeful or (len(la) >= 2 and float(la.max()) < self.bounds[(size, b)] + math.log(1 - margin))
        if key not in self._cache:
            va, vb = self.samples.get(self.coll, a, size), self.samples.get(self.coll, b, size)
            ok = len(va) >= 2 and len(vb) >= 2
            self._cache[key] = (
                ok
                and judge(self.samples, self.coll, size, b, a, self.rng, margin, self.alpha, self.n_boot)[2] == FASTER
            )
        return self._cache[key]


def survivors(judge: Judge, lo, hi, names, considered, prune) -> list:
    """The algorithms of `names` considered at lo and hi (measured, or out of
    reach there) and not left out between them."""
    at = [n for n in names if (lo, n) in considered and (hi, n) in considered]
    return [
        a
        for a in at
        if a == DEFAULT
        or not any(judge.faster(lo, c, a, prune) and judge.faster(hi, c, a, prune) for c in at if c not in (a, DEFAULT))
    ]


def _beats_all(judge, lo, hi, w, keep, noise) -> bool:
    return all(judge.faster(lo, w, x, noise) and judge.faster(hi, w, x, noise) for x in keep if x not in (w, DEFAULT))


def resolved(judge: Judge, lo, hi, winners, keep, noise) -> bool:
    w = winners[lo]
    if w != winners[hi]:
        return False
    if w != DEFAULT:
        return _beats_all(judge, lo, hi, w, keep, noise)
    same = [
        x
        for x in keep
        if x != DEFAULT
        and not any(judge.faster(s, a, b, noise) for s in (lo, hi) for a, b in ((x, DEFAULT), (DEFAULT, x)))
    ]
    return any(_beats_all(judge, lo, hi, x, keep, noise) for x in same)


def lower_bound(samples, coll, size, name, below, above):
    """A lower bound on the log of `name`'s launch medians at `size` from its
    fastest launch at `below` < size (time does not fall as messages grow)
    and at `above` > size scaled by size / above (time per byte does not
    grow, less PER_BYTE_SLACK), the larger; None without either (either
    None: not measured there)."""
    bounds = []
    for at, scale in ((below, 1.0), (above, size / above * (1 - PER_BYTE_SLACK) if above else None)):
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
