# SPDX-License-Identifier: BSD-3-Clause
"""Allgather: every rank contributes b bytes (the benchmark's size) and ends
with all p·b; n = p·b, f = (p − 1)/p."""

from mpiscope.models.costmodels.base import Algo, ceil_lg, fold, halves

BENCH = "allgather"
COLLECTIVE = "allgather"


def message_bytes(size: int) -> float:
    return float(size)


def _ring(c, b, p):
    return (p - 1) * c.hop(b)


def _recursive_doubling(c, b, p):
    pp, lg, r = fold(p)
    t = sum(c.hop(((1 << k) + min(r, 1 << k)) * b) for k in range(lg))
    return t + (c.hop(b) + c.hop(p * b) if r else 0.0)


def _bruck(c, b, p):
    return sum(c.hop(halves(p, k) * b) for k in range(ceil_lg(p)))


def _fan_in_fan_out(c, b, p):
    L = ceil_lg(p)
    return sum(c.hop(halves(p, k) * b) for k in range(L)) + L * c.hop(p * b)


def _repeated_binary_tree(c, b, p):
    # Root j starts its broadcast once it has the block of root j − 1, which
    # reaches it last of that root's ⌈lg p⌉ sends; then the last tree.
    L = ceil_lg(p)
    return (p - 1) * (L * c.S(b) + c.R(b)) + L * c.hop(b)


def _pipeline(c, b, p):
    if p == 2:
        return 2 * c.hop(b)
    # Critical path: 2(p − 1) hops and p − 1 messages queued behind others.
    return 2 * (p - 1) * c.hop(b) + (p - 1) * c.queue(b)


def _full_fan_in(c, b, p):
    return p * c.S(b) + 2 * (p - 1) * c.R(b)


def _full_fan_out(c, b, p):
    return c.hop(b) + (p - 2) * c.queue(b)


ALGORITHMS = (
    Algo("ring", _ring, "(p−1)α + fnβ", "(p−1)(S(b) + R(b))"),
    Algo("recursive_doubling", _recursive_doubling, "lg p·α + fnβ", "Σₖ S(2ᵏb) + R(2ᵏb)"),
    Algo("bruck", _bruck, "⌈lg p⌉α + fnβ", "Σₖ S(min(2ᵏ, p−2ᵏ)b) + R(…)"),
    Algo("fan_in_fan_out", _fan_in_fan_out, "2 lg p·α + fnβ + lg p·nβ", "Σₖ (S + R)(2ᵏb) + lg p·(S(n) + R(n))"),
    Algo(
        "repeated_binary_tree",
        _repeated_binary_tree,
        "(p − 1 + lg p)(α + bβ)",
        "(p−1)(lg p·S(b) + R(b)) + lg p·(S(b) + R(b))",
    ),
    Algo("pipeline", _pipeline, "3(p−1)(α + bβ)", "2(p−1)(S(b) + R(b)) + (p−1)·max(S(b), R(b))"),
    Algo("full_fan_in", _full_fan_in, "2(p−1)(α + bβ)", "p·S(b) + 2(p−1)R(b)"),
    Algo("full_fan_out", _full_fan_out, "(p−1)(α + bβ)", "S(b) + R(b) + (p−2)·max(S(b), R(b))"),
)
