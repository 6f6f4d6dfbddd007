# SPDX-License-Identifier: BSD-3-Clause
"""With Hockney costs and no overlap (every message keeps its sender busy
for α + β·m, costs.py) the simulator, running the schedules our algorithms
record, equals the closed-form cost models to 1e-9 relative: binomial
broadcast, recursive-doubling allreduce (with γ) and ring allgather, for
powers of two and others. No MPI: the schedules come from native/engine/colls
compiled against the recording backend."""

import pytest

from mpiscope.models.costmodels import predict_time
from mpiscope.models.costmodels.base import Costs
from mpiscope.sim.costs import SimCosts
from mpiscope.sim.simulate import Extras, algorithm

ALPHA, BETA, GAMMA = 1.7e-6, 0.83e-9, 0.21e-9
PS = (2, 3, 4, 5, 6, 7, 8, 11, 13, 16, 17, 31, 64, 100, 129)
CASES = [("bcast", "binomial", 4096), ("allreduce", "recursive_doubling", 65536),
         ("allgather", "ring", 1000)]


@pytest.mark.parametrize("bench,algo,size", CASES)
def test_simulated_equals_closed_form(bench, algo, size):
    costs = SimCosts(alpha_s=ALPHA, beta_s=BETA, gamma=GAMMA)
    model = Costs(ALPHA, BETA, 0.0, 0.0, GAMMA)
    for p in PS:
        sim = algorithm(bench, algo, p, size, costs, Extras())
        want = predict_time(bench, algo, size, p, model)
        assert sim.regime == "simulated"
        assert sim.median == pytest.approx(want, rel=1e-9, abs=0), (bench, algo, p)


def test_other_algorithms_are_not_faster_than_the_critical_path_of_one_message():
    """A sanity bound for every algorithm: at least one message's Hockney time,
    and no deadlock for any p (the schedules are complete and matchable)."""
    from mpiscope.models.costmodels import ALGORITHMS
    costs = SimCosts(alpha_s=ALPHA, beta_s=BETA)
    for bench, algos in ALGORITHMS.items():
        for algo in algos:
            for p in (2, 5, 8):
                t = algorithm(bench, algo, p, 256, costs, Extras()).median
                assert t >= ALPHA, (bench, algo, p)


def test_every_algorithm_equals_its_closed_form_on_powers_of_two():
    """Each collective's cost model (written for p = 2^k) against the
    schedule of the algorithm itself, simulated: equal for every algorithm
    of every collective, with γ."""
    from mpiscope.models.costmodels import ALGORITHMS
    costs = SimCosts(alpha_s=ALPHA, beta_s=BETA, gamma=GAMMA)
    model = Costs(ALPHA, BETA, 0.0, 0.0, GAMMA)
    for bench, algos in ALGORITHMS.items():
        for algo in algos:
            for p in (2, 4, 8, 16, 32):
                sim = algorithm(bench, algo, p, 4096, costs, Extras()).median
                assert sim == pytest.approx(predict_time(bench, algo, 4096, p, model), rel=1e-9, abs=0), \
                    (bench, algo, p)


def test_beyond_the_operation_limit_symmetry_or_the_cost_model_answers():
    """Ring allgather on 2^17 ranks has 3.4·10^10 operations: every rank is
    rank 0 shifted, so rank 0 alone is simulated, and equals the closed
    form. Ring allreduce with blocks of unequal size is not symmetric: the
    cost model answers, and says so."""
    p = 1 << 17
    costs = SimCosts(alpha_s=ALPHA, beta_s=BETA)
    ans = algorithm("allgather", "ring", p, 8, costs, Extras())
    assert ans.regime == "symmetric"
    assert ans.median == pytest.approx((p - 1) * (ALPHA + 8 * BETA), rel=1e-9, abs=0)
    ans = algorithm("allreduce", "ring", p, 8, costs, Extras())
    assert ans.regime == "cost model"
    assert ans.median == predict_time("allreduce", "ring", 8, p, Costs(ALPHA, BETA, 0.0, 0.0))


def test_a_symmetric_schedule_simulates_alike_whole_and_as_one_rank():
    from mpiscope.sim import binary
    costs = ["--alpha-s", 1e-6, "--G", 1e-9, "--L", 1e-6, "--o-s", 2e-7, "--o-r", 3e-7, "--g", 2e-7]
    for algo in ("ring", "full_fan_out", "bruck"):
        argv = ["--bench", "allgather", "--algo", algo, "-p", 97, "--size", 4096, *costs]
        whole = binary.simulate(argv)["makespan_median_s"]
        one = binary.simulate(argv + ["--symmetric"])
        assert one["simulated_ranks"] == 1 and one["makespan_median_s"] == pytest.approx(whole, rel=1e-12)
