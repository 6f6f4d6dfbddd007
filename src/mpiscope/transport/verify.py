# SPDX-License-Identifier: BSD-3-Clause
"""`transport advise --verify`: the library's defaults (D) against the advised
settings (A), launched D A A D D A A D … so that a linear drift falls on both
alike. Per benchmark × size the pooled samples of each side are judged by
compare's statistics, never a bare ratio; since one launch's samples are not
independent, "advised faster/slower" also needs every round (one D, one A)
judged alone to agree, else "same"; too few samples: "insufficient".

The settings are rules (settings.Rule): the rule behind a size advised slower is
withdrawn and the rest verified again, until no size is slower or no rule is
left, so what advise recommends was never slower in its own verification."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mpiscope.stats.compare import (
    DEFAULT_ALPHA,
    DEFAULT_NOISE,
    DEFAULT_SEED,
    FASTER,
    INSUFFICIENT,
    SAME,
    SLOWER,
    compare_samples,
    min_samples,
)
from mpiscope.store.ingest import load
from mpiscope.store.series import all_series_samples, bench_label
from mpiscope.transport.settings import LibrarySettings, from_rules, withdraw

DEFAULTS, ADVISED = "defaults", "advised"


def launch_order(rounds: int) -> list:
    """D A, then A D, then D A …: 2 × rounds launches, each side first in
    every other round (the first launch of a job pays for cold caches)."""
    if rounds < 1:
        raise ValueError("at least one round")
    return [x for r in range(rounds) for x in ((DEFAULTS, ADVISED) if r % 2 == 0 else (ADVISED, DEFAULTS))]


def pooled(run_dirs) -> dict:
    """{(bench label, size): (unit, values)} over the runs (valid samples, launches pooled)."""
    out: dict = {}
    for d in run_dirs:
        table, run = load(d)
        for bench, algo, size, smp in all_series_samples(table, run):
            key = (bench_label(bench, algo), int(size))
            unit, vals = out.get(key, (smp.unit, []))
            out[key] = (unit, vals + list(smp.values))
    return out


@dataclass(frozen=True)
class VerifyRow:
    bench: str
    size: int
    unit: str
    n_defaults: int
    n_advised: int
    speedup: float  # > 1: the advised settings are faster (time D / A, bandwidth A / D)
    speedup_low: float
    speedup_high: float
    p_value: float
    verdict: str  # advised faster / advised slower / same / insufficient
    rounds: tuple = ()  # each round's own verdict, in launch order

    def to_dict(self) -> dict:
        return dict(vars(self))


_WORDS = {FASTER: "advised faster", SLOWER: "advised slower", SAME: "same", INSUFFICIENT: INSUFFICIENT}


def judge(
    defaults: dict,
    advised: dict,
    noise: float = DEFAULT_NOISE,
    alpha: float = DEFAULT_ALPHA,
    seed: int = DEFAULT_SEED,
    rounds=(),
) -> list:
    """One VerifyRow per benchmark × size measured on both sides, from
    compare_samples (A = defaults, B = advised) of the pooled samples; with
    `rounds` ([(defaults, advised)] of each round alone), a change stands
    only if every round's own verdict is that change."""
    per_round = [{(r.bench, r.size): r.verdict for r in judge(d, a, noise, alpha, seed)} for d, a in rounds]
    rng = np.random.default_rng(seed)
    rows = []
    for key in sorted(set(defaults) & set(advised)):
        bench, size = key
        unit, d = defaults[key]
        a = advised[key][1]
        if not len(d) or not len(a) or not (np.median(d) > 0 and np.median(a) > 0):
            rows.append(
                VerifyRow(
                    bench,
                    size,
                    unit,
                    len(d),
                    len(a),
                    float("nan"),
                    float("nan"),
                    float("nan"),
                    float("nan"),
                    INSUFFICIENT,
                )
            )
            continue
        bw = unit == "B/s"
        ratio, p, v, _ = compare_samples(d, a, rng, higher_is_better=bw, noise=noise, alpha=alpha)
        # ratio = advised / defaults of the stored values; a speedup is its
        # inverse for times (the interval inverted too), itself for bandwidths
        s, lo, hi = (ratio.point, ratio.low, ratio.high) if bw else (1 / ratio.point, 1 / ratio.high, 1 / ratio.low)
        seen = tuple(r.get(key, INSUFFICIENT) for r in per_round)
        verdict = _WORDS[v]
        if v in (FASTER, SLOWER) and any(x != verdict for x in seen):
            verdict = _WORDS[SAME]  # the pooled test alone: a launch's luck, not replicated
        rows.append(VerifyRow(bench, size, unit, len(d), len(a), s, lo, hi, p, verdict, seen))
    return rows


def needed(alpha: float = DEFAULT_ALPHA) -> int:
    return min_samples(alpha)


SLOWER_WORD = _WORDS[SLOWER]


@dataclass
class Pass:
    settings: LibrarySettings  # what was verified
    launches: list  # [(side, run_dir)] in launch order
    rows: list  # VerifyRow


def verify_settings(chosen: LibrarySettings, measure) -> tuple:
    """(passes, withdrawn, final): `measure(settings)` launches the defaults
    and `settings` alternately and returns (launches, VerifyRows). Rules
    behind a slower size are withdrawn (settings.withdraw), the rest verified
    again; withdrawn: [(Rule, [the VerifyRows that withdrew it])]; final:
    the settings left, never slower in their last pass (no rule: the
    defaults, nothing left to verify)."""
    current, passes, withdrawn = chosen, [], []
    while current.rules:
        launches, rows = measure(current)
        passes.append(Pass(current, launches, rows))
        slow = [r for r in rows if r.verdict == SLOWER_WORD]
        if not slow:
            break
        out = withdraw(current.rules, [r.size for r in slow])
        withdrawn += [(rule, [r for r in slow if rule.covers(r.size)] or slow) for rule in out]
        current = from_rules(
            current.library, [r for r in current.rules if r not in out], note=current.note, measured=current.measured
        )
    return passes, withdrawn, current
