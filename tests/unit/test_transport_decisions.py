# SPDX-License-Identifier: BSD-3-Clause
"""The transport lab's crossovers, library settings and verification decided
from given numbers, without launching anything: the crossover starts the
final run of wins, settings follow the library's own crossover and its
paths as the run's settings name them, and advise --verify alternates its
launches and keeps a change only when every round repeats it."""

import pytest

from mpiscope.transport.crossovers import crossover
from mpiscope.transport.settings import Thresholds, for_library, library_settings


def test_crossover_is_the_start_of_the_final_run_of_wins():
    sizes = [1, 2, 4, 8, 16]
    assert crossover(sizes, {1: False, 2: True, 4: False, 8: True, 16: True}) == (8, 4)
    assert crossover(sizes, {1: True, 2: True, 4: True, 8: True, 16: True}) == (1, None)
    assert crossover(sizes, {1: True, 2: True, 4: True, 8: True, 16: False}) == (None, 16)
    assert crossover(sizes, {4: False, 16: True}) == (16, 4)  # only where both were measured
    assert crossover(sizes, {}) == (None, None)


def test_settings_follow_the_library_s_own_crossover():
    t = Thresholds("socket", True, None, copy_max=65536, cma_min=131072, cma_min_cold=65536,
                   cma_min_late=None, basic_max=16384)
    # each family's own paths measured both ways: single copy from 128K, copy up to 64K
    s = {x.library.split(" (")[0]: x for x in library_settings(
        t, {"Open MPI 4": (131072, 65536), "Open MPI 5": (None, 16 << 20), "UCX": (131072, 65536),
            "MPICH": (1024, None)})}
    assert s["Open MPI 4.x"].measured and s["Open MPI 4.x"].launcher_args == [
        "--mca", "btl_vader_single_copy_mechanism", "cma", "--mca", "btl_vader_eager_limit", "65536",
        "--mca", "btl_vader_max_send_size", "65536"]
    assert s["Open MPI 5.x"].launcher_args == ["--mca", "smsc", "^cma"]  # copy wins everywhere
    assert s["UCX"].env == {"UCX_TLS": "posix,cma,self", "UCX_RNDV_THRESH": "131072"}
    assert s["MPICH ch4:ofi/posix"].env == {"MPIR_CVAR_CH4_CMA_ENABLE": "1"}  # single copy everywhere
    assert s["mpiscope hybrid"].env["MPISCOPE_TP_THRESHOLDS"] == "socket:16384,131072,-"
    # not measured: the library keeps its defaults (no words, no variables), and
    # the lines say how to measure its two paths
    u = {x.library.split(" (")[0]: x for x in library_settings(t)}
    for fam in ("Open MPI 4.x", "Open MPI 5.x", "UCX", "MPICH ch4:ofi/posix"):
        assert not u[fam].measured and not u[fam].launcher_args and not u[fam].env
        assert all(line.startswith("#") for line in u[fam].lines) and "--launcher-args" in u[fam].lines[2]
    lib = library_settings(t)
    assert for_library(lib, "Open MPI v4.1.4, package: Debian").library.startswith("Open MPI 4")
    assert for_library(lib, "Open MPI v5.0.3").library.startswith("Open MPI 5")
    assert for_library(lib, "MPICH Version: 4.0.2\nMPICH Device: ch4:ucx").library.startswith("UCX")


def test_library_paths_are_read_from_the_run_s_settings():
    from types import SimpleNamespace

    from mpiscope.transport.paths import COPY, SINGLE, mechanism

    def run(lib, words=(), env=None):
        return SimpleNamespace(context={"mpi_library": lib, "env": env or {}}, library=lib,
                               plan={"launcher_args": list(words)})

    assert mechanism(run("Open MPI v4.1.4"))[:2] == ("Open MPI 4", SINGLE)
    assert mechanism(run("Open MPI v4.1.4", ["--mca", "btl_vader_single_copy_mechanism", "none"]))[:2] == \
        ("Open MPI 4", COPY)
    assert mechanism(run("Open MPI v5.0.3", ["--mca", "smsc", "^cma"]))[:2] == ("Open MPI 5", COPY)
    assert mechanism(run("Open MPI v4.1.4", env={"OMPI_MCA_btl_vader_single_copy_mechanism": "none"}))[1] == COPY
    ucx = "MPICH Version: 4.0.2\nMPICH Device: ch4:ucx"
    assert mechanism(run(ucx, ["-genv", "UCX_TLS", "posix,self"]))[:2] == ("UCX", COPY)
    assert mechanism(run(ucx, ["-genv", "UCX_TLS", "posix,cma,self"]))[:2] == ("UCX", SINGLE)
    assert mechanism(run("Open MPI v4.1.4", ["-x", "UCX_TLS=posix,self"]))[0] == "Open MPI 4"


def test_verify_launches_alternate_defaults_and_advised():
    from mpiscope.transport.verify import ADVISED, DEFAULTS, launch_order

    D, A = DEFAULTS, ADVISED
    assert launch_order(1) == [D, A]
    assert launch_order(2) == [D, A, A, D]  # ABBA: a linear drift falls on both alike
    order = launch_order(5)
    assert order.count(D) == order.count(A) == 5
    # never three of a side in a row, and each side opens every other round
    assert all(len(set(order[i:i + 3])) == 2 for i in range(len(order) - 2))
    assert [order[2 * r] for r in range(5)] == [D, A, D, A, D]
    with pytest.raises(ValueError):
        launch_order(0)


def test_verify_verdicts_are_compare_s_per_size(monkeypatch):
    import numpy as np

    from mpiscope.stats import compare
    from mpiscope.transport import verify

    rng = np.random.default_rng(3)
    t = rng.normal(1.0, 0.01, 40)
    d = {("pingpong", 8): ("s", list(t)), ("pingpong", 1024): ("s", list(t)), ("bw", 8): ("B/s", list(t)),
         ("bw", 64): ("B/s", list(t[:3])), ("bw", 99): ("B/s", list(t))}
    a = {("pingpong", 8): ("s", list(t / 2)), ("pingpong", 1024): ("s", list(t * 1.001)),
         ("bw", 8): ("B/s", list(t / 2)), ("bw", 64): ("B/s", list(t[:3] * 2))}
    rows = {(r.bench, r.size): r for r in verify.judge(d, a)}
    assert set(rows) == {("pingpong", 8), ("pingpong", 1024), ("bw", 8), ("bw", 64)}  # only both sides
    fast = rows[("pingpong", 8)]  # half the time: twice as fast, the interval around it
    assert fast.verdict == "advised faster" and fast.speedup_low <= fast.speedup <= fast.speedup_high
    assert 1.9 < fast.speedup < 2.1
    assert rows[("pingpong", 1024)].verdict == "same"  # 0.1%: inside the noise band
    slow = rows[("bw", 8)]  # half the bandwidth
    assert slow.verdict == "advised slower" and 0.45 < slow.speedup < 0.55
    few = rows[("bw", 64)]  # 3 samples a side: no verdict, however large the ratio
    assert few.verdict == "insufficient" and few.n_defaults == 3 < verify.needed()
    # the verdicts are compare's own: what compare_samples says is what judge reports
    monkeypatch.setattr(verify, "compare_samples",
                        lambda *x, **k: (*compare.compare_samples(*x, **k)[:2], compare.SLOWER, None))
    assert {r.verdict for r in verify.judge(d, a)} == {"advised slower"}


def test_verify_change_must_replicate_in_every_round():
    import numpy as np

    from mpiscope.transport import verify

    rng = np.random.default_rng(5)
    t, u = rng.normal(1.0, 0.01, 40), rng.normal(1.0, 0.01, 10)
    key = ("pingpong", 8)

    def side(x):
        return {key: ("s", list(x))}

    # round 1 (40 samples): advised twice as fast; round 2 (10): no change.
    # Pooled, the test says faster; not replicated, so the verdict is "same"
    rounds = [(side(t), side(t / 2)), (side(u), side(u))]
    pooled_d, pooled_a = side(np.r_[t, u]), side(np.r_[t / 2, u])
    (only_pooled,) = verify.judge(pooled_d, pooled_a)
    (row,) = verify.judge(pooled_d, pooled_a, rounds=rounds)
    assert only_pooled.verdict == "advised faster"
    assert row.rounds == ("advised faster", "same") and row.verdict == "same"
    # both rounds faster: it stands
    (both,) = verify.judge(pooled_d, side(np.r_[t / 2, t / 2]), rounds=[(side(t), side(t / 2))] * 2)
    assert both.verdict == "advised faster" and both.rounds == ("advised faster",) * 2
