# SPDX-License-Identifier: BSD-3-Clause
"""Where a library's settings cannot keep its own choice at some sizes of a
collective they give rules for (mpilibs: keeps_default; Intel MPI, whose
I_MPI_ADJUST_<OP> replaces the default at every size), a rule keeping the
default names instead the algorithm the default was read to run there,
exactly (mpilibs: read_defaults): the default's stand-in, which runs the
same code. A collective with a size whose default has no known stand-in,
or whose stand-in the verification found slower, is left to the library
at every size: no rule of it names an algorithm."""

from __future__ import annotations

from mpiscope.mpilibs.algorithm_catalog import DEFAULT


def stand_ins(cfg, winners: dict, default_runs: dict, withdrawn: list) -> tuple:
    """(winners with each DEFAULT of a collective with a named winner
    replaced by its stand-in, {collective: the first size without one})."""
    out, left = dict(winners), {}
    for c in cfg.collectives:
        sizes = cfg.sizes_of(c)
        if all(winners.get((c, s), DEFAULT) == DEFAULT for s in sizes):
            continue
        failed = {(w["size"], w["algorithm"]) for w in withdrawn if w["collective"] == c}
        for s in sizes:
            if winners.get((c, s), DEFAULT) != DEFAULT:
                continue
            name, exact = default_runs.get((c, s), (None, False))
            if not exact or (s, name) in failed:
                left[c] = s
                break
            out[(c, s)] = name
        if c in left:
            out.update({(c, s): DEFAULT for s in sizes})
    return out, left
