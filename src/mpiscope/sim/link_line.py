# SPDX-License-Identifier: BSD-3-Clause
"""The line time = c + G·m of a link's largest messages, fitted so that
stalls do not move it. A stall only ever adds time, so each size stands for
the low quantile of its repetitions (the wire is the floor: stalls that hit
some repetitions drop out), and the line through the sizes is Theil-Sen's
(Theil 1950, Sen 1968): the median of the slopes between every pair of
sizes, and the median of the intercepts that slope leaves. A size stalled
through all its repetitions spoils only the slopes it takes part in, fewer
than half of them from five sizes on, where least squares would follow it."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from mpiscope.common.errors import UsageError

FLOOR_QUANTILE = 0.1  # a size's time: the 10th percentile of its repetitions


def floor_time(samples: ArrayLike) -> float:
    """A size's time on the wire: the floor of its repetitions."""
    return float(np.quantile(np.asarray(samples, dtype=float), FLOOR_QUANTILE))


def floor_line(series: Sequence[tuple[int, ArrayLike]]) -> tuple[float, float]:
    """(G, c) of time = c + G·m through the (size, samples) pairs' floors."""
    by_size: dict[int, list[float]] = {}
    for size, samples in series:
        by_size.setdefault(int(size), []).extend(np.asarray(samples, dtype=float).ravel().tolist())
    sizes = sorted(size for size, samples in by_size.items() if samples)
    if len(sizes) < 2:
        raise UsageError(
            f"a link's rate is fitted to two message sizes or more, {len(sizes)} given: "
            "measure pingpong over a range of sizes (e.g. --sizes 256-256K:x2)"
        )
    m = np.array(sizes, dtype=float)
    t = np.array([floor_time(by_size[size]) for size in sizes])
    i, j = np.triu_indices(len(m), k=1)
    G = float(np.median((t[j] - t[i]) / (m[j] - m[i])))
    return G, float(np.median(t - G * m))
