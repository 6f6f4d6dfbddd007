# SPDX-License-Identifier: BSD-3-Clause
"""Broadcast of n bytes (the benchmark's size) from a root; f = (p − 1)/p;
s = the segment size of the pipelined chain (--segment, 8 KiB by default)."""

import math

from mpiscope.models.costmodels.base import Algo, ceil_lg, halves
from mpiscope.models.costmodels.allgather import _recursive_doubling as _allgather_rd

BENCH = "bcast"
COLLECTIVE = "bcast"


def message_bytes(size: int) -> float:
    return float(size)


def _scatter(c, n, p):
    # Binomial scatter of p blocks: the chain to the last rank halves each step.
    return sum(c.hop(halves(p, k) * n / p) for k in range(ceil_lg(p)))


def _binomial(c, n, p):
    return ceil_lg(p) * c.hop(n)


def _scatter_allgather_recursive_doubling(c, n, p):
    return _scatter(c, n, p) + _allgather_rd(c, n / p, p)


def _scatter_allgather_ring(c, n, p):
    return _scatter(c, n, p) + (p - 1) * c.hop(n / p)


def _pipelined_chain(c, n, p):
    s = min(c.segment, n)
    segments = math.ceil(n / s)
    return (p - 1) * c.hop(s) + (segments - 1) * c.queue(s)


def _linear(c, n, p):
    # The root's p − 1 sends follow one another on its link; the last one is received.
    return c.hop(n) + (p - 2) * c.queue(n)


ALGORITHMS = (
    Algo("binomial", _binomial, "lg p·(α + nβ)", "lg p·(S(n) + R(n))"),
    Algo(
        "scatter_allgather_recursive_doubling",
        _scatter_allgather_recursive_doubling,
        "2 lg p·α + 2fnβ",
        "2 Σₖ S(2ᵏn/p) + R(2ᵏn/p)",
    ),
    Algo(
        "scatter_allgather_ring",
        _scatter_allgather_ring,
        "(lg p + p − 1)α + 2fnβ",
        "Σₖ (S + R)(2ᵏn/p) + (p−1)(S + R)(n/p)",
    ),
    Algo(
        "pipelined_chain",
        _pipelined_chain,
        "(p − 2 + ⌈n/s⌉)(α + sβ)",
        "(p−1)(S(s) + R(s)) + (⌈n/s⌉ − 1)·max(S(s), R(s))",
    ),
    Algo("linear", _linear, "(p − 1)(α + nβ)", "S(n) + R(n) + (p−2)·max(S(n), R(n))"),
)
