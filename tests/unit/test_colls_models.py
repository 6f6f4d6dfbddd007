# SPDX-License-Identifier: BSD-3-Clause
"""Cost models of our own collective algorithms (no MPI): formulas against
values computed by hand, the classical formulas for powers of two, the
crossover search on a case with a known answer, units, and machine files."""

import json
import math

import pytest

from mpiscope.models.costmodels import ALGORITHMS, Costs, predict_time
from mpiscope.models.costmodels.params import parse_per_byte, parse_time
from mpiscope.models.costmodels.predict import Crossover, crossovers, predict

# α = 1, β = 0.001 per byte: a 1000-byte message costs 2. γ = 0.0001 per byte.
H = Costs.hockney(1.0, 0.001, 0.0001)
# The same total per message, split 1:4 between sender and receiver.
SR = Costs(0.2, 0.0002, 0.8, 0.0008, 0.0001)

HAND = [  # bench, algorithm, p, size, costs, value worked out by hand
    ("allgather", "ring", 8, 1000, H, 14.0),                      # 7 × 2
    ("allgather", "recursive_doubling", 8, 1000, H, 10.0),        # 2 + 3 + 5
    ("allgather", "recursive_doubling", 5, 1000, H, 15.0),        # fold 2 + 6, steps 3 + 4
    ("allgather", "bruck", 8, 1000, H, 10.0),
    ("allgather", "bruck", 5, 1000, H, 7.0),                      # 2 + 3 + 2
    ("allgather", "fan_in_fan_out", 8, 1000, H, 37.0),            # 10 + 3 × 9
    ("allgather", "repeated_binary_tree", 8, 1000, H, 20.0),      # (7 + 3) × 2
    ("allgather", "repeated_binary_tree", 8, 1000, SR, 25.6),     # 7(3·0.4 + 1.6) + 3 × 2
    ("allgather", "pipeline", 8, 1000, H, 42.0),                  # 3 × 7 × 2
    ("allgather", "pipeline", 8, 1000, SR, 39.2),                 # 2·7·2 + 7·1.6
    ("allgather", "pipeline", 2, 1000, H, 4.0),
    ("allgather", "full_fan_in", 8, 1000, H, 28.0),               # 2 × 7 × 2
    ("allgather", "full_fan_in", 8, 1000, SR, 25.6),              # 8·0.4 + 14·1.6
    ("allgather", "full_fan_out", 8, 1000, H, 14.0),
    ("allgather", "full_fan_out", 8, 1000, SR, 11.6),             # 2 + 6·1.6
    ("allreduce", "recursive_doubling", 8, 4000, H, 16.2),        # 3 × (5 + 0.4)
    ("allreduce", "recursive_doubling", 6, 4000, H, 21.2),        # fold 10.4, 2 × 5.4
    ("allreduce", "rabenseifner", 8, 4000, H, 13.35),             # 6.85 halving + 6.5 doubling
    ("allreduce", "ring", 8, 4000, H, 21.35),                     # 7 × (2 × 1.5 + 0.05)
    ("allreduce", "fan_in_fan_out", 8, 4000, H, 31.2),            # 3 × (2 × 5 + 0.4)
    ("allreduce", "ring", 8, 4003, H, 21.35),                     # 1000 ints either way
    ("reduce_scatter_block", "recursive_halving", 8, 1000, H, 10.7),  # 5.4 + 3.2 + 2.1
    ("reduce_scatter_block", "recursive_halving", 5, 1000, H, 16.0),  # fold 8.5, 4.3 + 3.2
    ("reduce_scatter_block", "pairwise", 8, 1000, H, 14.7),
    ("reduce_scatter_block", "ring", 8, 1000, H, 14.7),
    ("reduce_scatter_block", "repeated_binary_tree", 8, 1000, H, 50.4),  # 8 × 3 × 2.1
    ("reduce_scatter_block", "pipeline", 8, 1000, H, 43.4),           # 2·7·2.1 + 7·2
    ("reduce_scatter_block", "full_fan_in", 8, 1000, H, 29.4),        # 14 × 2.1
    ("reduce_scatter_block", "full_fan_in", 8, 1000, SR, 27.0),       # 8·0.4 + 14·1.7
    ("reduce_scatter_block", "full_fan_out", 8, 1000, H, 14.7),       # 2 + 6·2 + 0.7
    ("bcast", "binomial", 8, 8000, H, 27.0),
    ("bcast", "scatter_allgather_recursive_doubling", 8, 8000, H, 20.0),  # 10 + 10
    ("bcast", "scatter_allgather_ring", 8, 8000, H, 24.0),                # 10 + 7 × 2
    ("bcast", "pipelined_chain", 8, 8000, Costs.hockney(1.0, 0.001, 0, 2048), 30.48),  # 10 × 3.048
    ("bcast", "linear", 8, 8000, H, 63.0),                                 # 7 × (1 + 8)
    ("bcast", "linear", 8, 1000, SR, 11.6),                               # 2 + 6·1.6
    ("alltoall", "linear", 8, 1000, H, 14.0),
    ("alltoall", "pairwise", 8, 1000, H, 14.0),
    ("alltoall", "bruck", 8, 1000, H, 15.0),                      # 3 × (1 + 4)
    ("alltoall", "bruck", 6, 1000, H, 10.0),                      # 4 + 3 + 3
    ("alltoall", "linear", 8, 1000, SR, 11.6),
]


@pytest.mark.parametrize("bench, algo, p, size, costs, want", HAND)
def test_formulas_against_hand_computed_values(bench, algo, p, size, costs, want):
    assert predict_time(bench, algo, size, p, costs) == pytest.approx(want, rel=1e-12)


def test_every_algorithm_has_a_model_and_is_sane():
    for bench, names in ALGORITHMS.items():
        for name in names:
            assert predict_time(bench, name, 1000, 1, H) == 0.0          # nothing to send
            for p in range(2, 34):
                times = [predict_time(bench, name, s, p, c) for c in (H, SR) for s in (8, 1000, 65536)]
                assert all(math.isfinite(t) and t > 0 for t in times), (bench, name, p)
                # more bytes never take less time
                assert times[0] <= times[1] <= times[2] and times[3] <= times[4] <= times[5]
    assert predict_time("allgather", "ring", 0, 4, H) == 0.0   # an empty allgather sends nothing
    assert predict_time("allreduce", "ring", 0, 4, H) > 0      # reductions send at least one int


@pytest.mark.parametrize("p", [2, 4, 16, 64])
def test_classical_formulas_for_powers_of_two(p):
    a, b, g = 3e-6, 2e-10, 1e-10
    c = Costs.hockney(a, b, g)
    lg, f = math.log2(p), (p - 1) / p
    blk = 4096                       # allgather, alltoall, reduce_scatter block; n = p·blk
    n = p * blk
    want = {
        ("allgather", "ring"): (p - 1) * a + f * n * b,
        ("allgather", "recursive_doubling"): lg * a + f * n * b,
        ("allgather", "bruck"): lg * a + f * n * b,
        ("reduce_scatter_block", "recursive_halving"): lg * a + f * n * (b + g),
        ("reduce_scatter_block", "pairwise"): (p - 1) * a + f * n * (b + g),
        ("alltoall", "pairwise"): (p - 1) * a + f * n * b,
        ("alltoall", "bruck"): lg * a + n / 2 * lg * b,
    }
    for (bench, algo), t in want.items():
        assert predict_time(bench, algo, blk, p, c) == pytest.approx(t, rel=1e-12), (bench, algo)
    v = 1 << 20                      # allreduce vector, bcast buffer
    want = {
        ("allreduce", "recursive_doubling"): lg * (a + v * b + v * g),
        ("allreduce", "rabenseifner"): 2 * lg * a + 2 * f * v * b + f * v * g,
        ("allreduce", "ring"): 2 * (p - 1) * a + 2 * f * v * b + f * v * g,
        ("bcast", "binomial"): lg * (a + v * b),
        ("bcast", "scatter_allgather_ring"): (lg + p - 1) * a + 2 * f * v * b,
        ("bcast", "scatter_allgather_recursive_doubling"): 2 * lg * a + 2 * f * v * b,
    }
    for (bench, algo), t in want.items():
        assert predict_time(bench, algo, v, p, c) == pytest.approx(t, rel=1e-12), (bench, algo)


def test_crossover_with_a_known_answer():
    # p = 8: recursive doubling 3α + 3nβ, Rabenseifner 6α + 1.75nβ (ring and fan-in
    # fan-out never win): equal at n = 2.4 α/β = 12000 B, so Rabenseifner is best
    # from the next size that holds more ints, 12004 B.
    c = Costs.hockney(50e-6, 0.01e-6)
    assert crossovers("allreduce", 8, c) == [Crossover(12004, "recursive_doubling", "rabenseifner")]
    # bytes collectives: binomial bcast 3(α + nβ) against 6α + 1.75nβ; the tie at 12000 B
    # stays with the first in registry order
    first = crossovers("bcast", 8, c, 1, 1 << 18)
    assert first == [Crossover(12001, "binomial", "scatter_allgather_recursive_doubling")]
    assert [r.name for r in predict("allreduce", 65536, 8, c, None)][0] == "rabenseifner"


def test_units():
    assert parse_time("50us") == pytest.approx(50e-6)
    assert parse_time("1.5 ms") == pytest.approx(1.5e-3)
    assert parse_time("2e-6") == pytest.approx(2e-6)
    assert parse_per_byte("0.01us/B") == pytest.approx(1e-8)
    assert parse_per_byte("10GB/s") == pytest.approx(1e-10)
    assert parse_per_byte("1GiB/s") == pytest.approx(1 / 1024 ** 3)


def test_machine_files(tmp_path):
    from mpiscope.models.costmodels.params import load_machine
    from mpiscope.stats.estimate import Estimate
    from mpiscope.models.machine_model import MachineModel, save

    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"alpha": "2us", "beta": "10GB/s", "gamma": 1e-10, "segment": 4096}))
    m = load_machine(plain)
    assert (m.alpha, m.beta, m.gamma, m.segment) == (pytest.approx(2e-6), pytest.approx(1e-10), 1e-10, 4096)
    assert not m.has_sr

    def est(x):
        return Estimate(x, 0.0, 0.95, x, x, "test")

    loggp = MachineModel(1, "2026-01-01T00:00:00", {}, 8,
                         {"EEL": est(1.0e-6 + 8 * 1e-10), "o_s": est(0.25e-6), "o_r": est(0.3e-6),
                          "G": est(1e-10)}, {}, {}, [], [])
    path = save(loggp, tmp_path / "loggp.json")
    m = load_machine(path)
    # α = EEL − 8·G, β = G; the sender pays o_s, the receiver the rest
    assert m.alpha == pytest.approx(1.0e-6) and m.beta == pytest.approx(1e-10)
    assert (m.alpha_s, m.beta_s) == (pytest.approx(0.25e-6), 0.0)
    assert (m.alpha_r, m.beta_r) == (pytest.approx(0.75e-6), pytest.approx(1e-10))
