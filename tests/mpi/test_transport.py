# SPDX-License-Identifier: BSD-3-Clause
"""The intra-node transport lab (native/transport/, engine benchmarks tp_*,
`mpiscope transport`): every design delivers the bytes it was given, the
CMA probe says exactly why CMA is unavailable, the hybrid takes thresholds,
and advise turns a stored run into crossovers and library settings.

One small run (2 ranks, two sizes, tiny budgets) serves the tests that read
a run; timing claims are in bench/transport_lab.py. Run alone:
    flock /tmp/mpiscope-heavy.lock .venv/bin/pytest -q tests/mpi/test_transport.py
"""

import json
import subprocess

import pytest

from mpiscope.engine.build import ensure_engine
from mpiscope.engine.mpi import find_mpi
from mpiscope.store.ingest import load
from runcli import mpiscope, run_ok
from schemas import validate

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
