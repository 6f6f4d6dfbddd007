# SPDX-License-Identifier: BSD-3-Clause
"""The samples a tune measured, per cell and per launch: the launch is the
unit of its decisions (stats/launch_compare)."""

from __future__ import annotations

import dataclasses

import numpy as np

TUNED = "tuned"  # the library with the files written (the verification's)


@dataclasses.dataclass
class Samples:
    """Samples per (collective, algorithm name or DEFAULT or TUNED, engine
    size), kept per launch."""

    values: dict = dataclasses.field(default_factory=dict)  # key -> [(launch id, array)]
    runs: list = dataclasses.field(default_factory=list)  # run ids, in launch order
    failures: list = dataclasses.field(default_factory=list)  # (what was forced, message)
    _next: int = 0  # launch ids for adds without one

    def add(self, coll, alg, size, vals, launch=None):
        """`launch`: the launch the values come from (None: a launch of their own)."""
        if launch is None:
            self._next -= 1
            launch = self._next
        self.values.setdefault((coll, alg, size), []).append((launch, np.asarray(vals, dtype=float)))

    def drop_launch(self, launch):
        """Sets a launch's samples aside (a launch disturbed by other work)."""
        for key in list(self.values):
            self.values[key] = [(k, v) for k, v in self.values[key] if k != launch]

    def get(self, coll, alg, size):
        """Every launch's samples pooled."""
        parts = [v for _, v in self.values.get((coll, alg, size), [])]
        return np.concatenate(parts) if parts else np.empty(0)

    def launches(self, coll, alg, size) -> list:
        """One array per launch, in launch order."""
        by = {}
        for k, v in self.values.get((coll, alg, size), []):
            by[k] = np.concatenate([by[k], v]) if k in by else v
        return list(by.values())

    def groups_at(self, coll, size) -> list:
        """Every algorithm's launches at one cell (the launch variance's pool)."""
        return [self.launches(*key) for key in self.values if key[0] == coll and key[2] == size]

    def median(self, coll, alg, size):
        v = self.get(coll, alg, size)
        return float(np.median(v)) if len(v) else None
