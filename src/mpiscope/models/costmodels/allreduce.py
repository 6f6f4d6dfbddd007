# SPDX-License-Identifier: BSD-3-Clause
"""Allreduce: every rank contributes a vector of n bytes (the benchmark's
size; it sums max(1, size/4) ints) and ends with the sum; f = (p − 1)/p."""

from mpiscope.models.costmodels.base import Algo, ceil_lg, fold

BENCH = "allreduce"
COLLECTIVE = "allreduce"


def message_bytes(size: int) -> float:
    return 4.0 * max(1, size // 4)


def _fold_cost(c, n, r):
    # The odd rank of each folded pair sends its vector in and gets the result back.
    return 2 * c.hop(n) + c.combine(n) if r else 0.0


def _recursive_doubling(c, n, p):
    pp, lg, r = fold(p)
    return _fold_cost(c, n, r) + lg * (c.hop(n) + c.combine(n))


def _rabenseifner(c, n, p):
    pp, lg, r = fold(p)
    parts = [n / (1 << k) for k in range(1, lg + 1)]
    return _fold_cost(c, n, r) + sum(c.hop(m) + c.combine(m) for m in parts) + sum(c.hop(m) for m in parts)


def _ring(c, n, p):
    return (p - 1) * (2 * c.hop(n / p) + c.combine(n / p))


def _fan_in_fan_out(c, n, p):
    L = ceil_lg(p)
    return L * (2 * c.hop(n) + c.combine(n))


ALGORITHMS = (
    Algo("recursive_doubling", _recursive_doubling, "lg p·(α + nβ + nγ)", "lg p·(S(n) + R(n) + nγ)"),
    Algo("rabenseifner", _rabenseifner, "2 lg p·α + 2fnβ + fnγ", "Σₖ 2(S + R)(n/2ᵏ) + (n/2ᵏ)γ"),
    Algo("ring", _ring, "2(p−1)α + 2fnβ + fnγ", "(p−1)(2(S + R)(n/p) + (n/p)γ)"),
    Algo("fan_in_fan_out", _fan_in_fan_out, "2 lg p·(α + nβ) + lg p·nγ", "lg p·(2(S(n) + R(n)) + nγ)"),
)
