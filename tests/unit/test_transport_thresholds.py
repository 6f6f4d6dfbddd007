# SPDX-License-Identifier: BSD-3-Clause
"""The transport lab's decisions from samples, without launching anything:
thresholds come from significant wins (compare's test), the hybrid is judged
against the best design with a CI of the ratio, and advise --verify
withdraws the rule behind a size its settings made slower."""

import numpy as np

from mpiscope.mpilibs.openmpi.paths import OMPI_EAGER
from mpiscope.transport.against_best import BEYOND, UNDECIDED, WITHIN, judge_labs, margin_of, tally
from mpiscope.transport.crossovers import crossovers, library_crossovers
from mpiscope.transport.curves import Curve, Lab, _add
from mpiscope.transport.settings import (Rule, Thresholds, from_rules, library_settings,
                                         withdraw)
from mpiscope.transport.verify import VerifyRow, verify_settings

K, M = 1024, 1 << 20


def curve(bench, algo, medians, n=40, spread=0.003, seed=0, placement="l3"):
    """A curve of `n` samples per size around each median (relative spread)."""
    rng = np.random.default_rng(seed + len(algo))
    c = Curve(bench, algo, placement, "B/s" if "bw" in bench else "s")
    for size, m in medians.items():
        _add(c, size, rng.normal(m, m * spread, n))
    return c


def lab_of_curves(*cs):
    return Lab([], {(c.bench, c.placement, c.algo): c for c in cs})


def test_a_lower_median_inside_the_noise_is_no_win():
    sizes = (64 * K, M, 4 * M, 16 * M)
    copy = {64 * K: 10e9, M: 10e9, 4 * M: 10e9, 16 * M: 10e9}
    # cma 1% faster at 1M (inside the ±2% band: compare says "same"), 20% from 4M on
    cma = {64 * K: 5e9, M: 10.1e9, 4 * M: 12e9, 16 * M: 12e9}
    lab = lab_of_curves(curve("tp_bw", "basic", copy), curve("tp_bw", "advanced", {s: 9e9 for s in sizes}),
                        curve("tp_bw", "cma", cma))
    (x,) = [x for x in crossovers(lab) if x.challenger == "cma"]
    assert x.verdicts[M] == "same" and x.verdicts[4 * M] == "faster" and x.verdicts[64 * K] == "slower"
    assert (x.size, x.last_loss) == (4 * M, M)  # a median rule would have said (1M, 64K)
    # the pool against the ring: 10% slower everywhere, never a win
    (pool,) = [x for x in crossovers(lab) if x.challenger == "advanced"]
    assert pool.size is None and set(pool.verdicts.values()) == {"slower"}


def test_too_few_samples_never_win():
    lab = lab_of_curves(curve("tp_bw", "basic", {M: 10e9}, n=3), curve("tp_bw", "cma", {M: 20e9}, n=3))
    (x,) = [x for x in crossovers(lab) if x.challenger == "cma"]
    assert x.verdicts == {M: "insufficient"} and x.size is None


def test_a_library_keeps_single_copy_unless_copying_wins_significantly():
    sizes = (K, 64 * K, M)
    single = curve("lib_bw", "Open MPI 4|single copy", {s: 10e9 for s in sizes})
    near = curve("lib_bw", "Open MPI 4|copy", {s: 10.1e9 for s in sizes}, seed=1)  # 1% better: noise
    lab = lab_of_curves(single, near)
    assert library_crossovers(lab, "l3") == {"Open MPI 4": (K, None)}  # single copy everywhere: no change
    lab.curves[("lib_bw", "l3", near.algo)] = curve("lib_bw", "Open MPI 4|copy", {K: 12e9, 64 * K: 10.1e9, M: 9e9})
    assert library_crossovers(lab, "l3") == {"Open MPI 4": (64 * K, K)}  # copying advised only at 1K


def _lab(hybrid, best=1e-6, n=40, spread=0.003):
    sizes = list(hybrid)
    return lab_of_curves(curve("tp_latency", "basic", {s: best for s in sizes}, n=n, spread=spread),
                         curve("tp_latency", "advanced", {s: 2 * best for s in sizes}, n=n, spread=spread),
                         curve("tp_latency", "hybrid", {s: best * r for s, r in hybrid.items()}, n=n,
                               spread=spread, seed=7))


def test_hybrid_against_the_best_is_judged_by_the_interval():
    rows = {r.size: r for r in judge_labs(_lab({8: 1.0, 64: 1.10, 512: 1.03}))}
    assert all(r.best == "basic" for r in rows.values())
    same, far, edge = rows[8], rows[64], rows[512]
    assert same.margin == WITHIN and same.verdict == "same" and same.low <= same.ratio <= same.high
    assert far.margin == BEYOND and far.verdict == "slower" and far.low > 1.03
    assert edge.margin == UNDECIDED and edge.low <= 1.03 <= edge.high  # right at the margin: no claim
    t = tally(rows.values())[("l3", "tp_latency")]
    assert t == {"sizes": 3, WITHIN: 1, BEYOND: 1, UNDECIDED: 1, "indistinguishable": 1}


def test_a_margin_claim_must_hold_in_every_run_alone():
    assert margin_of(0.99, 1.01) == WITHIN
    assert margin_of(0.99, 1.01, rounds=(1.0, 1.05)) == UNDECIDED  # one run alone says otherwise
    assert margin_of(1.05, 1.08, rounds=(1.06, 1.07)) == BEYOND
    assert margin_of(1.05, 1.08, rounds=(1.06, 1.01)) == UNDECIDED
    assert margin_of(0.99, 1.01, verdict="insufficient") == UNDECIDED  # too few samples: no claim
    # pooled within, and each run's own ratio too
    pooled = _lab({8: 1.0})
    alone = [_lab({8: 1.0}), _lab({8: 1.2}, n=10)]
    (r,) = judge_labs(pooled, alone)
    assert r.margin == UNDECIDED and len(r.rounds) == 2 and r.rounds[1] > 1.1


def test_the_ring_keeps_every_size_the_pool_never_wins():
    def hy(basic_max):
        t = Thresholds("l3", False, "no", copy_max=None, cma_min=None, cma_min_cold=None, cma_min_late=None,
                       basic_max=basic_max)
        return library_settings(t)[-1].env["MPISCOPE_TP_THRESHOLDS"]

    assert hy(None) == "l3:-,-,-"  # never the pool: basic at every size (not 0: the pool at every size)
    assert hy(0) == "l3:0,-,-" and hy(16 * K) == "l3:16384,-,-"
    sizes = (K, 64 * K, M)
    ring = curve("tp_bw", "basic", {s: 10e9 for s in sizes})
    from mpiscope.transport.settings import thresholds

    for pool, want in (({s: 5e9 for s in sizes}, None), ({s: 20e9 for s in sizes}, 0),
                       ({K: 5e9, 64 * K: 20e9, M: 20e9}, K)):
        xs = crossovers(lab_of_curves(ring, curve("tp_bw", "advanced", pool)))
        assert thresholds("l3", xs).basic_max == want, pool


def test_the_pool_takes_over_below_a_single_copy_whatever_happens_above():
    """The lab's case: the pool far ahead of the ring up to 1 MiB, a tie at 16
    MiB, where cma is faster than both from 4 MiB. Above cma's threshold the
    copies' order does not matter: the pool takes over from 64 KiB."""
    from mpiscope.transport.settings import thresholds

    sizes = (K, 64 * K, M, 4 * M, 16 * M)
    ring = curve("tp_bw", "basic", {s: 10e9 for s in sizes})
    pool = curve("tp_bw", "advanced", {K: 5e9, 64 * K: 20e9, M: 20e9, 4 * M: 20e9, 16 * M: 10e9})
    cma = curve("tp_bw", "cma", {K: 1e9, 64 * K: 5e9, M: 15e9, 4 * M: 30e9, 16 * M: 30e9})
    xs = crossovers(lab_of_curves(ring, pool, cma))
    t = thresholds("l3", xs)
    assert t.cma_min == 4 * M and t.basic_max == K
    no_cma = crossovers(lab_of_curves(ring, pool))   # without cma the tie at 16 MiB counts
    assert thresholds("l3", no_cma).basic_max is None


def test_open_mpi_rules_say_which_sizes_they_change():
    t = Thresholds("l3", True, None, copy_max=64 * K, cma_min=128 * K, cma_min_cold=None, cma_min_late=None,
                   basic_max=None)
    s = {x.library.split(" (")[0]: x for x in library_settings(t, {"Open MPI 4": (128 * K, 64 * K)})}
    cma, eager = s["Open MPI 4.x"].rules
    assert cma.covers(M) and not cma.covers(OMPI_EAGER) and cma.launcher_args[-1] == "cma"
    assert eager.covers(64 * K) and not eager.covers(64 * K + 1) and not eager.covers(OMPI_EAGER)
    # the settings are their rules' words, in order
    assert s["Open MPI 4.x"].launcher_args == [*cma.launcher_args, *eager.launcher_args]
    assert s["Open MPI 4.x"].lines == ["mpirun " + " ".join(s["Open MPI 4.x"].launcher_args)]


def test_withdraw_the_rules_behind_the_slower_sizes():
    a = Rule("single copy", ("--mca", "x", "cma"), low=4 * K)
    b = Rule("eager", ("--mca", "e", "65536"), low=4 * K, high=64 * K)
    c = Rule("tls", env=(("UCX_TLS", "posix,self"),), low=M)
    assert withdraw([a, b, c], [16 * K]) == [b]  # both change 16K's path: the narrower goes first
    assert withdraw([a, b, c], [2 * M]) == [a, c]  # equally wide (no bound): both
    assert withdraw([a, b, c], [16 * K, 2 * M]) == [a, b, c]
    assert withdraw([a, b, c], [1 * K]) == [a, b, c]  # no rule changes 1K: the settings as a whole did
    assert withdraw([a, b, c], []) == []
    d = from_rules("Open MPI 4.x", [c])
    assert d.env == {"UCX_TLS": "posix,self"} and d.lines == ["export UCX_TLS=posix,self"]
    assert from_rules("Open MPI 4.x", []).lines == ["# keep the defaults"]


def _row(size, verdict):
    return VerifyRow("pingpong", size, "s", 20, 20, 1.0, 0.9, 1.1, 0.5, verdict)


def test_verify_withdraws_and_verifies_what_remains():
    cma = Rule("single copy by cma", ("--mca", "btl_vader_single_copy_mechanism", "cma"), low=OMPI_EAGER)
    eager = Rule("eager limit 65536", ("--mca", "btl_vader_eager_limit", "65536"), low=OMPI_EAGER, high=64 * K)
    seen = []

    def measure(settings):  # slower at 32K while the eager limit is raised; the same without it
        seen.append([r.name for r in settings.rules])
        slow = any(r.covers(32 * K) and r is eager for r in settings.rules)
        return [("defaults", None), ("advised", None)], [
            _row(8, "same"), _row(32 * K, "advised slower" if slow else "same"), _row(M, "advised faster")]

    passes, withdrawn, final = verify_settings(from_rules("Open MPI 4.x", [cma, eager]), measure)
    assert seen == [["single copy by cma", "eager limit 65536"], ["single copy by cma"]]
    assert [(w.name, [r.size for r in rows]) for w, rows in withdrawn] == [("eager limit 65536", [32 * K])]
    assert final.rules == [cma] and final.launcher_args == list(cma.launcher_args)
    assert all(r.verdict != "advised slower" for r in passes[-1].rows)  # what is kept was not slower


def test_verify_ends_at_the_defaults_when_every_rule_goes():
    tls = Rule("transports", env=(("UCX_TLS", "posix,self"),))
    calls = []

    def measure(settings):
        calls.append(settings)
        return [], [_row(8, "advised slower")]

    passes, withdrawn, final = verify_settings(from_rules("UCX", [tls]), measure)
    assert len(calls) == 1 and [w.name for w, _ in withdrawn] == ["transports"]
    assert final.rules == [] and final.lines == ["# keep the defaults"] and not final.env


def test_library_crossover_compares_a_library_s_own_two_paths():
    single = curve("lib_bw", "Open MPI 4|single copy", {1024: 1e9, 65536: 6e9, 1 << 20: 9e9})
    copy = curve("lib_bw", "Open MPI 4|copy", {1024: 2e9, 65536: 5e9, 1 << 20: 2e9})
    only = curve("lib_bw", "UCX|copy", {1024: 1e9})  # one path: no crossover
    lab = Lab([], {("lib_bw", "l3", c.algo): c for c in (single, copy, only)})
    assert library_crossovers(lab, "l3") == {"Open MPI 4": (65536, 1024)}
    # single copy, the libraries' default, wins where it wins in latency too
    lat_single = curve("lib_latency", "Open MPI 4|single copy", {1024: 2e-6, 65536: 9e-6, 1 << 20: 1e-4})
    lat_copy = curve("lib_latency", "Open MPI 4|copy", {1024: 1e-6, 65536: 8e-6, 1 << 20: 4e-4})
    lab.curves.update({("lib_latency", "l3", c.algo): c for c in (lat_single, lat_copy)})
    assert library_crossovers(lab, "l3") == {"Open MPI 4": (65536, 1024)}
    lab.curves[("lib_bw", "l3", copy.algo)] = copy = curve(
        "lib_bw", "Open MPI 4|copy", {1024: 2e9, 65536: 5e9, 1 << 20: 20e9})  # copy wins the stream at 1M
    assert library_crossovers(lab, "l3") == {"Open MPI 4": (65536, 1024)}  # single copy still the round trip
    lab.curves[("lib_latency", "l3", lat_copy.algo)] = curve(
        "lib_latency", "Open MPI 4|copy", {1024: 1e-6, 65536: 8e-6, 1 << 20: 5e-5})  # now both at 1M
    assert library_crossovers(lab, "l3") == {"Open MPI 4": (None, 1 << 20)}
