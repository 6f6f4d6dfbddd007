# SPDX-License-Identifier: BSD-3-Clause
"""Which launches stand for a cell, from what the library's default was read
to run (mpilibs: read_defaults; Open MPI and Intel MPI under gdb): an
algorithm that runs exactly what the default runs, or falls back to
another's code, is not launched on its own there; the adaptive search
gives it those launches (measure.Measured)."""

from __future__ import annotations

from mpiscope.mpilibs.algorithm_catalog import DEFAULT


def representatives(default_runs: dict, runs_as: dict) -> dict:
    """{(coll, size, name): the configuration whose launches are name's}:
    DEFAULT where the default runs name exactly, or runs what name falls
    back to; else the algorithm name falls back to, followed to its end."""
    out = {}
    for c, s, name in runs_as:
        seen, at = {name}, runs_as[(c, s, name)]
        while at != DEFAULT and (c, s, at) in runs_as and at not in seen:
            seen.add(at)
            at = runs_as[(c, s, at)]
        out[(c, s, name)] = at
    for (c, s), (name, exact) in default_runs.items():
        if exact:
            out[(c, s, name)] = DEFAULT
    return {k: (DEFAULT if v != DEFAULT and default_runs.get(k[:2]) == (v, True) else v) for k, v in out.items()}


def same_code(reps: dict, coll: str, size: int, a: str, b: str) -> bool:
    """Whether a rule choosing a and one choosing b at the cell run the same
    code there (`reps` as representatives gives): the same decision."""
    return reps.get((coll, size, a), a) == reps.get((coll, size, b), b)
