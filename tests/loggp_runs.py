# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: synthetic LogGP series with known parameters (no MPI), for
the LogGP and layer analysis and the JSON documents made from it."""

import numpy as np

from mpiscope.store.run import Run
from mpiscope.store.samples import Samples

US, NS = 1e-6, 1e-9
STEPS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)


def samples_of(values, launch=0):
    v = np.asarray(values, dtype=float)
    n = len(v)
    return Samples(v, 0, np.arange(n, dtype=np.int32), np.full(n, launch, dtype=np.int32),
                   np.zeros(n, dtype=np.int32), np.ones(n, dtype=np.int32))


def noisy(rng, value, n=41, sigma=0.01):
    return value * rng.lognormal(0.0, sigma, n)


def synthetic_run(eel=2.0 * US, o_s=0.3 * US, o_r=0.2 * US, g=1.0 * US, G=0.1 * NS,
                  sizes=(8, 1024, 65536, 1048576), queue_depths=(1, 8, 64), seed=5):
    """Series and context of a run obeying LogGP exactly (1% noise): the overlap
    test's time per message is max(g0, o + Δ), the flood's g + G·m (a little
    more at q = 1)."""
    rng = np.random.default_rng(seed)
    series, ctx_series = [], []

    def add(bench, algo, size, values, params=None):
        series.append((bench, algo, size, samples_of(values)))
        ctx_series.append({"bench": bench, "algo": algo, "size": size, "launch": 0,
                           "params": params or {}})

    for size in sizes:
        add("oneway", "mpi", size, noisy(rng, eel + G * size))
        for q in queue_depths:
            add("flood", f"q{q}", size, noisy(rng, (g + G * size) * (1.2 if q == 1 else 1.0)))
        for side, o in (("os", o_s), ("or", o_r)):
            g0 = max(g + G * size, o)
            for f in STEPS:
                delta = f * g0
                add("overhead", f"{side}+{f:g}g", size, noisy(rng, max(g0, o + delta)),
                    {"compute_s": delta, "step": f, "g0_s": g0})
    return series, Run.from_context({"run_id": "synthetic", "series": ctx_series})
