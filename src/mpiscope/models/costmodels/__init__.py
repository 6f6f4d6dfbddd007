# SPDX-License-Identifier: BSD-3-Clause
"""Cost models of mpiscope's own collective algorithms (native/engine/colls).

One module per collective, each a table of algorithms (base.Algo): the
time on p ranks under per-message costs (base.Costs), with its Hockney
(α, β, γ) and sender/receiver (αs, βs, αr, βr) formulas as text. The
registry below is keyed by the benchmark that measures the collective.
"""

from __future__ import annotations

from mpiscope.models.costmodels import allgather
from mpiscope.models.costmodels import allreduce
from mpiscope.models.costmodels import alltoall
from mpiscope.models.costmodels import bcast
from mpiscope.models.costmodels import reduce_scatter
from mpiscope.models.costmodels.base import DEFAULT_SEGMENT, Algo, Costs

_MODULES = (allgather, allreduce, reduce_scatter, bcast, alltoall)

# {benchmark: its module}; the benchmark's --algo names are its algorithms.
COLLECTIVES = {m.BENCH: m for m in _MODULES}
ALGORITHMS = {m.BENCH: tuple(a.name for a in m.ALGORITHMS) for m in _MODULES}


def algorithms(bench: str) -> tuple[Algo, ...]:
    return COLLECTIVES[bench].ALGORITHMS


def find(bench: str, name: str) -> Algo | None:
    return next((a for a in algorithms(bench) if a.name == name), None) if bench in COLLECTIVES else None


def predict_time(bench: str, name: str, size: int, p: int, costs: Costs) -> float:
    """Predicted seconds of `name` for the benchmark's `size` on p ranks.

    Nothing is sent for an empty message (the algorithms return at once), so
    a size of 0 bytes costs 0 for allgather, bcast and alltoall."""
    module = COLLECTIVES[bench]
    m = module.message_bytes(size)
    if p <= 1 or m <= 0:
        return 0.0
    return float(find(bench, name).time(costs, m, p))


__all__ = ["ALGORITHMS", "COLLECTIVES", "DEFAULT_SEGMENT", "Algo", "Costs", "algorithms", "find", "predict_time"]
