# SPDX-License-Identifier: BSD-3-Clause
"""One communicator size's decisions as rules in the library's sizes: each
collective's winners, bounded to --max-rules (rules.bounded), with what the
bound costs."""

from __future__ import annotations

from mpiscope.mpilibs.algorithm_catalog import DEFAULT
from mpiscope.tune import rules as R
from mpiscope.tune.library_sizes import library_size


def rules_table(library, p: int, cfg, names: dict, winners: dict, samples, weights) -> tuple:
    """({coll: {p: rules}}, {coll: [the bound's cost at each size it moves]});
    `weights` {coll: {size: calls}} of an application, or None."""
    table, costs = {}, {}
    for c in cfg.collectives:
        pts = []
        for s in cfg.sizes_of(c):
            w = winners.get((c, s), DEFAULT)
            meds = {n: samples.median(c, n, s) for n in names[c]}
            calls = weights.get(c, {}).get(s, 0.0) if weights is not None else None
            pts.append(R.Point(library_size(library, c, s, p), w, {n: m for n, m in meds.items() if m}, calls))
        rules, cost = R.bounded(pts, cfg.max_rules)
        table[c] = {p: rules}
        costs[c] = [
            {"library_size": s, "slowdown": x, **({"application_s": a} if a is not None else {})} for s, x, a in cost
        ]
    return table, costs
