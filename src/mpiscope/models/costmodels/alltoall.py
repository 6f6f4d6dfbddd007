# SPDX-License-Identifier: BSD-3-Clause
"""Alltoall: every rank sends b bytes (the benchmark's size) to every rank;
n = p·b bytes leave each rank."""

from mpiscope.models.costmodels.base import Algo, bits_set, ceil_lg

BENCH = "alltoall"
COLLECTIVE = "alltoall"


def message_bytes(size: int) -> float:
    return float(size)


def _linear(c, b, p):
    return c.hop(b) + (p - 2) * c.queue(b)


def _pairwise(c, b, p):
    return (p - 1) * c.hop(b)


def _bruck(c, b, p):
    return sum(c.hop(bits_set(p, k) * b) for k in range(ceil_lg(p)))


ALGORITHMS = (
    Algo("linear", _linear, "(p−1)(α + bβ)", "S(b) + R(b) + (p−2)·max(S(b), R(b))"),
    Algo("pairwise", _pairwise, "(p−1)α + fnβ", "(p−1)(S(b) + R(b))"),
    Algo("bruck", _bruck, "lg p·α + (n/2) lg p·β", "Σₖ S(cₖb) + R(cₖb), cₖ = #{i < p: bit k of i}"),
)
