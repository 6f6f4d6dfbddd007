"""Which algorithm a cell gets: one replaces the library's default only when
compare's verdict (Mann–Whitney test and the whole bootstrap CI of the ratio
of medians outside the noise band, stats/compare.py) says it is faster than
the default; among those, the one with the smallest median. Otherwise the
default stays."""

from __future__ import annotations

import numpy as np

from mpiscope.stats.compare import FASTER, compare_samples
from mpiscope.tune.discover import DEFAULT


def decide(samples, coll: str, size: int, names: list, rng, noise: float, alpha: float,
           n_boot: int = 1000):
    """(winner, rows): rows per algorithm measured with its median, the ratio of
    its median to the default's with CI, p and verdict."""
    base = samples.get(coll, DEFAULT, size)
    rows, candidates = [], []
    base_med = float(np.median(base)) if len(base) else None
    for name in names:
        vals = samples.get(coll, name, size)
        if not len(vals):
            continue
        row = {"algorithm": name, "n": int(len(vals)), "median_s": float(np.median(vals))}
        if name != DEFAULT and len(base) and base_med and row["median_s"] > 0:
            ratio, p, verdict, _ = compare_samples(base, vals, rng, noise=noise, alpha=alpha,
                                                   n_boot=n_boot)
            row.update(ratio=ratio.point, ratio_low=ratio.low, ratio_high=ratio.high, p_value=p,
                       verdict=verdict)
            if verdict == FASTER:
                candidates.append(row)
        rows.append(row)
    if not len(base):
        return None, rows  # without the default measured nothing may replace it
    winner = min(candidates, key=lambda r: r["median_s"])["algorithm"] if candidates else DEFAULT
    return winner, rows
