# SPDX-License-Identifier: BSD-3-Clause
"""What every cost formula is written with.

A message of m bytes keeps its sender busy for S(m) = αs + βs·m and its receiver
for R(m) = αr + βr·m (Tan and Strazdins 2002); a rank's sends follow one another,
so do its receives, but it can send and receive at once; a receive ends no
earlier than S + R after its send started. Reductions add γ per byte combined, at
the receiver. A chain of dependent messages costs S + R each ("hop"), a rank
pushing or taking several in a row max(S, R) each ("queue"). Hockney's
T(m) = α + β·m puts the whole cost on the receiver (αr = α, βr = β), so hop and
queue both cost α + β·m and the classical formulas come out."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

DEFAULT_SEGMENT = 8192  # bytes, the engine's default for pipelined algorithms


@dataclass(frozen=True)
class Costs:
    """Per-message costs (seconds, seconds per byte)."""

    alpha_s: float
    beta_s: float
    alpha_r: float
    beta_r: float
    gamma: float = 0.0
    segment: int = DEFAULT_SEGMENT

    @classmethod
    def hockney(cls, alpha, beta, gamma=0.0, segment=DEFAULT_SEGMENT) -> "Costs":
        return cls(0.0, 0.0, alpha, beta, gamma, segment)

    def S(self, m):
        return self.alpha_s + self.beta_s * m

    def R(self, m):
        return self.alpha_r + self.beta_r * m

    def hop(self, m):
        return self.S(m) + self.R(m)

    def queue(self, m):
        return max(self.S(m), self.R(m))

    def combine(self, m):
        return self.gamma * m


@dataclass(frozen=True)
class Algo:
    """One algorithm: its time on p ranks for messages of m bytes (as the
    benchmark's size means them, see each collective's `message_bytes`), and
    its formulas as text (for p a power of two)."""

    name: str
    time: Callable[[Costs, float, int], float]
    hockney: str
    sender_receiver: str


def ceil_lg(p: int) -> int:
    return max(0, math.ceil(math.log2(p))) if p > 1 else 0


def fold(p: int) -> tuple[int, int, int]:
    """(pp, lg pp, r): the largest power of two pp <= p and the r = p - pp
    ranks folded onto neighbours by the recursive-doubling family."""
    pp = 1 << (p.bit_length() - 1)
    return pp, pp.bit_length() - 1, p - pp


def halves(p: int, k: int) -> int:
    """min(2^k, p − 2^k): blocks moved in step k of Bruck's allgather and of a
    binomial gather or scatter (the last step may carry fewer)."""
    return min(1 << k, p - (1 << k))


def bits_set(p: int, k: int) -> int:
    """How many of 0..p−1 have bit k set: blocks Bruck's alltoall moves in step k."""
    period = 1 << (k + 1)
    full, rest = divmod(p, period)
    return full * (1 << k) + max(0, rest - (1 << k))
