# SPDX-License-Identifier: BSD-3-Clause
"""The verification's verdicts (verification.py launches): after writing,
check that the library reads the file and selects what it says. Our own
reader must select the decided algorithm in every cell; each cell's default
and tuned launches are judged over launches (`speedup_row`); under gdb every
cell must enter what its rule's algorithm enters when forced, and elsewhere
(MPICH) the tuned median must lie nearer that algorithm's than the default's
(`selection_check`). The verdicts are corrected for the number of cells
judged (`correct_for_cells`). Method: docs/explanation/tuner.md, "Proving the
file is in effect" and "Verification: default against tuned"."""

from __future__ import annotations

import math

import numpy as np

from mpiscope.mpilibs.algorithm_catalog import DEFAULT
from mpiscope.stats.compare import FASTER, SAME, SLOWER
from mpiscope.tune.decide import judge
from mpiscope.tune.cell_samples import TUNED, Samples


def speedup_row(default, tuned, rng, noise, alpha, n_boot=1000, pool=None):
    """Speedup default/tuned of one cell. `default`, `tuned`: per-launch sample
    arrays (a bare array is one launch). With two launches or more each, the
    interval and verdict are over launches (decide.judge; `pool`: the groups
    whose launch variance is pooled, e.g. the tune's own at the cell),
    otherwise over the pooled samples."""
    s = Samples()
    for name, launches in ((DEFAULT, default), (TUNED, tuned)):
        for v in [launches] if isinstance(launches, np.ndarray) else launches:
            s.add("c", name, 0, v)
    groups = s.groups_at("c", 0) + list(pool or [])
    ratio, p, verdict, unit = judge(s, "c", 0, DEFAULT, TUNED, rng, noise, alpha, n_boot, groups)
    d, t = s.get("c", DEFAULT, 0), s.get("c", TUNED, 0)
    # ratio = tuned / default; the speedup is its inverse, the interval inverted too
    return {
        "speedup": 1.0 / ratio.point,
        "speedup_low": 1.0 / ratio.high,
        "speedup_high": 1.0 / ratio.low,
        "p_value": p,
        "verdict": {FASTER: "tuned faster", SLOWER: "tuned slower", SAME: "same"}.get(verdict, verdict),
        "unit": unit,
        "launches": [len(s.launches("c", DEFAULT, 0)), len(s.launches("c", TUNED, 0))],
        "median_default_s": float(np.median(d)),
        "median_tuned_s": float(np.median(t)),
    }


# A default or tuned launch that ran its cells this many times slower than the
# median launch of its kind is set aside and launched again: on a node with
# other work, one busy launch can make every small cell of it look several
# times slower, and would decide them alone.
DISTURBED = 1.5
MIN_CELLS = 3  # cells a launch must have measured to be judged


def launch_factors(samples, name) -> dict:
    """{launch id: factor} for the launches that measured `name` (DEFAULT or
    TUNED) at MIN_CELLS cells or more, each against the other launches of the
    same kind (so a real difference between default and tuned is never taken
    for a disturbance): the median, over the cells, of the launch's median
    divided by the median of the kind's launch medians at the cell. A cell
    counts with three launches or more: a median of two cannot tell which
    one is off."""
    logs = {}
    for (coll, alg, size), parts in samples.values.items():
        if alg != name:
            continue
        meds = {}
        for launch, v in parts:
            meds.setdefault(launch, []).append(v)
        meds = {k: float(np.median(np.concatenate(v))) for k, v in meds.items()}
        meds = {k: math.log(m) for k, m in meds.items() if m > 0}
        if len(meds) < 3:
            continue
        center = float(np.median(list(meds.values())))
        for k, m in meds.items():
            logs.setdefault(k, []).append(m - center)
    return {k: math.exp(float(np.median(v))) for k, v in logs.items() if len(v) >= MIN_CELLS}


def with_forced_of(vs, tune, coll, size, name):
    """The verification's default launches at one cell against every launch
    of `name` forced there, the verification's one and the tune's own (the
    same forcing parameters): with a single forced launch of a few samples
    the verdict was 'insufficient', and the file was judged by nothing."""
    out = Samples()
    for v in vs.launches(coll, DEFAULT, size):
        out.add(coll, DEFAULT, size, v)
    for v in vs.launches(coll, name, size) + tune.launches(coll, name, size):
        out.add(coll, name, size, v)
    return out


def selection_check(tuned, forced, default) -> str:
    """Whose time the tuned cell has: 'forced' when its median is nearer (in
    ratio) to the forced algorithm's than to the default's, else 'default'."""
    if not len(forced) or not len(tuned) or not len(default):
        return "not measured"
    t, f, d = (float(np.median(x)) for x in (tuned, forced, default))
    if min(t, f, d) <= 0:
        return "not measured"
    return "forced" if abs(math.log(t / f)) < abs(math.log(t / d)) else "default"


def holm(p_values, alpha) -> list:
    """Holm's step-down over one family: which hypotheses are rejected with
    the chance of any false rejection within alpha. A p of None or NaN (no
    test) is never rejected."""
    ps = [math.inf if p is None or p != p else p for p in p_values]
    order = sorted(range(len(ps)), key=ps.__getitem__)
    out = [False] * len(ps)
    for step, i in enumerate(order):
        if not ps[i] <= alpha / (len(order) - step):
            break
        out[i] = True
    return out


def correct_for_cells(rows, alpha):
    """Keep a cell's verdict "tuned faster" or "tuned slower" only when its
    test survives Holm's correction in its family; otherwise it becomes
    "same" (the per-cell verdict kept as `verdict_per_cell`). Two families,
    alpha split between them: the cells whose rule names an algorithm (does
    each rule deliver? a slower one is withdrawn) and the cells whose rule
    keeps the default (does the file leave them alone?). The chance of any
    false verdict over all cells stays within alpha."""
    judged = [r for r in rows if r.get("verdict") in ("tuned faster", "tuned slower", "same")]
    families = [[r for r in judged if r["rule"] != DEFAULT], [r for r in judged if r["rule"] == DEFAULT]]
    families = [f for f in families if f]
    for family in families:
        kept = holm([r.get("p_value", math.nan) for r in family], alpha / len(families))
        for r, ok in zip(family, kept):
            if r["verdict"] != "same" and not ok:
                r["verdict_per_cell"], r["verdict"] = r["verdict"], "same"
    return rows


def geomean(values) -> float | None:
    vals = [v for v in values if v and v > 0]
    return math.exp(sum(map(math.log, vals)) / len(vals)) if vals else None


def file_in_effect(cells: list) -> bool | None:
    """Under gdb: True when every cell enters what its rule's algorithm
    enters when forced (the default's when the rule keeps it).
    Otherwise, by time, from the cells whose rule names an algorithm that is
    faster than the default beyond noise (forced against default, in the same
    verification): True when most of them have the forced algorithm's time,
    False when most have the default's, None when no cell tells."""
    seen = [c for c in cells if c.get("library_selects") and c.get("expected")]
    if seen:
        return all(c["library_selects"] == c["expected"] for c in seen)
    telling = [
        c
        for c in cells
        if c["rule"] != DEFAULT
        and c.get("forced_vs_default") == FASTER
        and c.get("selection_check") in ("forced", "default")
    ]
    if not telling:
        return None
    return 2 * sum(c["selection_check"] == "forced" for c in telling) > len(telling)
