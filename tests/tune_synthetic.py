# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: a synthetic library for the tuner (no MPI): Hockney costs of
two allreduce algorithms, and launches that draw every cell from them with
noise."""

import math
from types import SimpleNamespace

import numpy as np

from mpiscope.mpilibs.algorithm_catalog import DEFAULT, Algorithm, Catalog
from mpiscope.tune.measure import Launches

A, B = 20e-6, 1e-8          # latency (s) and time per byte of the synthetic network
SIZES = [8 * 4 ** k for k in range(9)]   # 8 B … 512 KiB


def cost(alg, size, p):
    """Hockney costs: recursive doubling against ring (ring wins from ~16 KiB
    on 4 and 8 ranks, never on 2); the library's default switches at 1 MiB."""
    rd = math.log2(p) * (A + size * B)
    ring = 2 * (p - 1) * A + 2 * size * B * (p - 1) / p
    if alg == DEFAULT:
        alg = "recursive_doubling" if size < (1 << 20) else "ring"
    return {"recursive_doubling": rd, "ring": ring}[alg]


class Served(Launches):
    """Launches that serve every job at once by `measure(plan, catalog, jobs,
    samples, repeat, say)`, with no MPI."""

    def __init__(self, measure):
        super().__init__(None)
        self.serve = measure

    def measure(self, plan, jobs, samples, repeat=1, say=print):
        self.serve(plan, self.catalog, jobs, samples, repeat, say)


def fake_measure(seed=3):
    """Every job's cells drawn from cost() with noise."""
    rng = np.random.default_rng(seed)

    def measure(plan, catalog, jobs, samples, repeat=1, say=print):
        for c, pairs in jobs.items():
            for name, sizes in pairs:
                for s in sizes:
                    samples.add(c, name, s, cost(name, s, plan.np) * rng.lognormal(0, 0.03, 40))
    return Served(measure)


def plan(p):
    return SimpleNamespace(np=p, ppn=None, cluster=None)


def ompi_catalog(version="6.0.0"):
    return Catalog("openmpi", version, {"allreduce": [Algorithm("recursive_doubling", "3"),
                                                      Algorithm("ring", "4")]}, "test")
