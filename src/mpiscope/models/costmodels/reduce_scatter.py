# SPDX-License-Identifier: BSD-3-Clause
"""Reduce-scatter, block variant (benchmark reduce_scatter_block): every
rank contributes p blocks of b bytes (the benchmark's size; max(1, size/4)
ints each) and ends with the sum of its block; n = p·b, f = (p − 1)/p."""

from mpiscope.models.costmodels.base import Algo, ceil_lg, fold

BENCH = "reduce_scatter_block"
COLLECTIVE = "reduce_scatter"


def message_bytes(size: int) -> float:
    return 4.0 * max(1, size // 4)


def _step(c, m):
    return c.hop(m) + c.combine(m)


def _recursive_halving(c, b, p):
    pp, lg, r = fold(p)
    t = 0.0
    for k in range(lg):
        g = pp >> (k + 1)  # virtual ranks per half
        t += _step(c, (g + min(r, g)) * b)
    return t + (_step(c, p * b) + c.hop(b) if r else 0.0)


def _pairwise(c, b, p):
    return (p - 1) * _step(c, b)


def _ring(c, b, p):
    return (p - 1) * _step(c, b)


def _repeated_binary_tree(c, b, p):
    return p * ceil_lg(p) * _step(c, b)


def _pipeline(c, b, p):
    if p == 2:
        return 2 * _step(c, b)
    return 2 * (p - 1) * _step(c, b) + (p - 1) * c.queue(b)


def _full_fan_in(c, b, p):
    return p * c.S(b) + 2 * (p - 1) * (c.R(b) + c.combine(b))


def _full_fan_out(c, b, p):
    return c.hop(b) + (p - 2) * c.queue(b) + (p - 1) * c.combine(b)


ALGORITHMS = (
    Algo("recursive_halving", _recursive_halving, "lg p·α + fnβ + fnγ", "Σₖ S(n/2ᵏ) + R(n/2ᵏ) + (n/2ᵏ)γ"),
    Algo("pairwise", _pairwise, "(p−1)α + fnβ + fnγ", "(p−1)(S(b) + R(b) + bγ)"),
    Algo("ring", _ring, "(p−1)α + fnβ + fnγ", "(p−1)(S(b) + R(b) + bγ)"),
    Algo("repeated_binary_tree", _repeated_binary_tree, "p lg p·(α + bβ + bγ)", "p lg p·(S(b) + R(b) + bγ)"),
    Algo("pipeline", _pipeline, "3(p−1)(α + bβ) + 2(p−1)bγ", "2(p−1)(S(b) + R(b) + bγ) + (p−1)·max(S(b), R(b))"),
    Algo("full_fan_in", _full_fan_in, "2(p−1)(α + bβ + bγ)", "p·S(b) + 2(p−1)(R(b) + bγ)"),
    Algo("full_fan_out", _full_fan_out, "(p−1)(α + bβ) + (p−1)bγ", "S(b) + R(b) + (p−2)·max(S(b), R(b)) + (p−1)bγ"),
)
