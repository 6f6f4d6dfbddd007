"""The intra-node transport lab (transport/, engine benchmarks tp_*,
`mpiscope transport`): every design delivers the bytes it was given, the
CMA probe says exactly why CMA is unavailable, the hybrid takes thresholds,
and advise turns a stored run into crossovers and library settings.

One small run (2 ranks, two sizes, tiny budgets) serves the tests that read
a run; timing claims are in bench/transport_lab.py. Run alone:
    flock /tmp/mpiscope-heavy.lock .venv/bin/pytest -q tests/test_transport.py
"""

import json
import subprocess

import pytest

from mpiscope.engine.build import ensure_engine
from mpiscope.engine.mpi import find_mpi
from mpiscope.store.ingest import load
from mpiscope.transport.crossovers import crossover
from mpiscope.transport.settings import Thresholds, for_library, library_settings
from runcli import mpiscope, run_ok
from test_json_schemas import validate

DESIGNS = ("basic", "advanced", "cma", "offload", "hybrid", "mpi")
BENCHES = "tp_latency,tp_bw,tp_bw_cold,tp_multibw,tp_skew,tp_overlap,tp_poll"
QUICK = ("--time-budget", 0.02, "--reps-min", 3, "--warmup", 1, "--sync", "barrier")


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    out = tmp_path_factory.mktemp("tp")
    # 0 B (one empty record), 8 B (inline) and 100000 B: several records of
    # the ring, chunks of the pool (32 KiB), one pull; --check verifies the
    # bytes of every message of every design
    run_dir, _ = run_ok("-n", 2, "--bench", BENCHES, "--sizes", "0,8,100000", "--check", *QUICK, out=out)
    return out, run_dir


def _engine_probe(env=None):
    engine = ensure_engine(find_mpi())
    p = subprocess.run([str(engine), "--probe-transport"], capture_output=True, text=True,
                       env={**__import__("os").environ, **(env or {})}, timeout=60)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_every_design_delivers_checked_bytes(lab):
    _, run_dir = lab
    table, run = load(run_dir)
    got = {(s.bench, s.algo, s.size): s for s in run.series}
    probe = _engine_probe()
    for bench in BENCHES.split(","):
        variants = ("static", "adaptive") if bench == "tp_poll" else DESIGNS
        for algo in variants:
            for size in (0, 8, 100000):
                s = got[(bench, algo, size)]
                skipped = (s.params or {}).get("skipped")
                if bench == "tp_poll" and size > 32768:
                    assert "datagram" in skipped, s  # the socket channel's limit, said so
                elif algo == "cma" and not probe["cma"]["available"]:
                    assert "cma unavailable" in skipped, s
                else:
                    assert not skipped and s.reps >= 1 and s.stop != "skipped", s
    # what the designs recorded about themselves
    p = got[("tp_bw", "hybrid", 100000)].params
    assert p["design"] == "hybrid" and p["placement"] in {c["class"] for c in probe["placement"]["classes"]}
    assert p["basic_max"] > 0 and p["msgs"] == got[("tp_bw", "hybrid", 100000)].window_msgs
    assert got[("tp_bw", "advanced", 100000)].params["chunk"] == 32768
    ov = got[("tp_overlap", "offload", 100000)].params
    assert ov["compute_s"] > 0 and ov["compute_actual_s"] > 0


def test_check_sees_corrupted_bytes(tmp_path):
    # the same check, with every received byte seen off by one: the run must fail
    p = mpiscope("run", "-n", 2, "--bench", "tp_latency", "--sizes", 100000, "--check", *QUICK,
                 out=tmp_path, env={"MPISCOPE_TEST_CORRUPT": "1"})
    assert p.returncode == 1 and "tp_latency" in p.stderr, p.stderr[-2000:]


def test_probe_names_the_reason_cma_fails():
    real = _engine_probe()
    assert isinstance(real["cma"]["available"], bool) and real["placement"]["cpus"] >= 1
    assert real["cma"]["facts"].count(";") >= 2  # ptrace scope; capability; seccomp
    for err, words in (("EPERM", ("ptrace_scope", "seccomp", "permission denied")),
                       ("ENOSYS", ("CONFIG_CROSS_MEMORY_ATTACH", "seccomp"))):
        fake = _engine_probe({"MPISCOPE_TEST_CMA_ERRNO": err})["cma"]
        assert fake["available"] is False and fake["errno"] == err, fake
        assert any(w in fake["reason"] for w in words), fake
    p = mpiscope("transport", "probe", env={"MPISCOPE_TEST_CMA_ERRNO": "EPERM"})
    assert p.returncode == 0 and "UNAVAILABLE" in p.stdout and "EPERM" in p.stdout, p.stdout
    p = mpiscope("transport", "probe", "--json")
    assert p.returncode == 0, p.stderr
    validate("transport-probe", json.loads(p.stdout))


def test_cma_unavailable_skips_cma_and_the_hybrid_goes_without(tmp_path):
    run_dir, _ = run_ok("-n", 2, "--bench", "tp_latency", "--sizes", 65536, "--check", *QUICK, out=tmp_path,
                        env={"MPISCOPE_TEST_CMA_ERRNO": "EPERM"})
    _, run = load(run_dir)
    by = {s.algo: s for s in run.series}
    assert "EPERM" in by["cma"].params["skipped"] and by["cma"].stop == "skipped"
    assert "EPERM" in by["hybrid"].params["no_cma"] and by["hybrid"].params["cma_min"] is None
    assert by["hybrid"].reps >= 1 and by["basic"].reps >= 1


def test_hybrid_thresholds_come_from_the_environment(tmp_path):
    cls = _engine_probe()["placement"]["classes"][0]["class"]
    env = {"MPISCOPE_TP_THRESHOLDS": f"remote:1K,2K,3K;{cls}:1K,64K,-"}
    run_dir, _ = run_ok("-n", 2, "--bench", "tp_latency", "--sizes", 100000, "--check", *QUICK, out=tmp_path,
                        env=env)
    _, run = load(run_dir)
    p = next(s.params for s in run.series if s.algo == "hybrid")
    if p["placement"] == cls:  # ranks bound to CPUs of the first class found (2 CPUs: the only one)
        assert (p["basic_max"], p["cma_min"], p["cma_min_late"]) == (1024, 65536, None), p


def test_advise_prints_crossovers_and_settings(lab):
    out, run_dir = lab
    p = mpiscope("transport", "advise", run_dir.name, "--json", out=out)
    assert p.returncode == 0, p.stderr
    a = json.loads(p.stdout)
    validate("transport-advise", a)
    (cls,) = a["placements"]
    states = {(x["state"], x["challenger"]) for x in a["crossovers"]}
    assert {("warm", "cma"), ("cold", "cma"), ("latency", "cma"), ("late receiver", "cma"),
            ("warm", "advanced")} <= states or not _engine_probe()["cma"]["available"]
    libs = [s["library"] for s in a["settings"][cls]]
    assert any(lib.startswith("Open MPI 4") for lib in libs) and any(lib.startswith("UCX") for lib in libs)
    # the best design at every size is one of the single designs, and the
    # hybrid's and MPI's ratios to it are costs, so never below 0
    for row in a["best"]["tp_latency"]:
        assert row["best"] in ("basic", "advanced", "cma", "offload")
        assert row["hybrid_ratio"] is None or row["hybrid_ratio"] > 0
    text = mpiscope("transport", "advise", run_dir.name, out=out)
    assert text.returncode == 0 and "btl_vader_single_copy_mechanism" in text.stdout
    assert "MPISCOPE_TP_THRESHOLDS" in text.stdout


def test_advise_refuses_a_run_without_lab_benchmarks(tmp_path):
    run_dir, _ = run_ok("-n", 2, "--bench", "pingpong", "--sizes", 8, *QUICK, out=tmp_path)
    p = mpiscope("transport", "advise", run_dir.name, out=tmp_path)
    assert p.returncode == 2 and "no transport lab benchmarks" in p.stderr, p.stderr
    p = mpiscope("transport", "advise", run_dir.name, "--verify-sizes", "x", out=tmp_path)
    assert p.returncode == 2 and "--verify-sizes" in p.stderr, p.stderr


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


def test_library_crossover_compares_a_library_s_own_two_paths():
    from mpiscope.transport.crossovers import library_crossovers
    from mpiscope.transport.curves import Lab
    from test_transport_thresholds import curve

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


def test_report_has_the_transport_section(lab, tmp_path):
    out, run_dir = lab
    html = tmp_path / "r.html"
    p = mpiscope("report", run_dir.name, "-o", html, out=out)
    assert p.returncode == 0, p.stderr
    text = html.read_text()
    assert "Transport lab: placement" in text and "MPISCOPE_TP_THRESHOLDS" in text and "<svg" in text


def test_multipair_bandwidth_runs_every_pair_with_its_own_segments(tmp_path):
    # 4 ranks on 2 CPUs (oversubscribed): pairs 0-2 and 1-3 at once, every byte checked
    run_dir, _ = run_ok("-n", 4, "--bench", "tp_multibw", "--sizes", 100000, "--check", *QUICK, out=tmp_path)
    table, run = load(run_dir)
    from mpiscope.store.samples import sample_values

    for algo in ("basic", "advanced", "hybrid", "mpi"):
        smp = sample_values(table, "tp_multibw", 100000, algo=algo)
        assert {f"{a}->{b}" for a, b in zip(smp.source_a, smp.source_b)} == {"0->2", "1->3"}, algo


def test_the_variants_python_counts_are_the_engine_s():
    from mpiscope.engine.describe import describe
    from mpiscope.measure.loggp_options import FIXED_VARIANTS

    known = describe("openmpi")
    for name, b in known.benchmarks.items():
        if name.startswith("tp_"):
            assert tuple(b.variants) == FIXED_VARIANTS[name], name


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


def test_offload_leaves_the_rank_as_it_found_it(tmp_path):
    # the variants of a size run together (variants_by_size), offload before
    # the hybrid: every series after an offload one finds the rank with the
    # CPU mask and the thread count the first series found (the helper joined,
    # the rank's own mask untouched or put back)
    run_dir, _ = run_ok("-n", 2, "--bench", "tp_latency,tp_bw", "--sizes", "8,100000", *QUICK, out=tmp_path)
    _, run = load(run_dir)
    for bench in ("tp_latency", "tp_bw"):
        series = [s for s in run.series if s.bench == bench]
        assert [(s.algo, s.size) for s in series] == [(a, n) for n in (8, 100000) for a in DESIGNS]
        first = series[0].params
        assert first["rank_cpus"] and first["threads"] >= 1, first
        off = [i for i, s in enumerate(series) if s.algo == "offload"]
        assert series[off[0]].params["threads"] == first["threads"] + 1  # its helper, counted while it runs
        after = [s for s in series[off[0] + 1:] if s.algo not in ("mpi", "offload") and not s.params.get("skipped")]
        assert after[0].algo == "hybrid" and len(after) == 5  # hybrid 8 B, then the four designs at 100000 B
        for s in after:
            assert (s.params["rank_cpus"], s.params["threads"]) == (first["rank_cpus"], first["threads"]), \
                (s.algo, s.size, s.params)


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


def test_huge_pages_put_both_sides_buffers_in_huge_pages(tmp_path):
    # 1 MiB messages by every design, every byte checked, from buffers the
    # engine advised for huge pages; each rank records what the kernel granted
    thp = _engine_probe()["thp"]
    assert thp["available"] == (thp["mode"] in ("always", "madvise"))
    run_dir, _ = run_ok("-n", 2, "--bench", "tp_bw", "--sizes", 1 << 20, "--huge-pages", "--check", *QUICK,
                        out=tmp_path)
    _, run = load(run_dir)
    assert run.context["huge_pages"] is True and "--huge-pages" in run.context["command"]
    granted = [e["huge_kib"] for e in run.ranks["0"].values()]
    assert len(granted) == 2
    for kib in granted:
        # whole 2 MiB pages, at most the two 2 MiB-rounded buffers of 1 MiB
        assert kib % 2048 == 0 and 0 <= kib <= 2 * 2048, granted
        assert (kib > 0) == thp["available"], (thp, granted)
    cma_ok = _engine_probe()["cma"]["available"]
    assert all(s.reps >= 1 for s in run.series if s.algo != "cma" or cma_ok)
    # without the option: nothing asked, nothing recorded
    run_dir, _ = run_ok("-n", 2, "--bench", "tp_latency", "--sizes", 8, *QUICK, out=tmp_path)
    _, plain = load(run_dir)
    assert plain.context["huge_pages"] is False and all("huge_kib" not in e for e in plain.ranks["0"].values())
