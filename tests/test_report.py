"""The HTML report: rendered by a real headless Chromium with no console
errors, self-contained, and escaping every label taken from data."""

import json
import re
import shutil

import pytest
from rawgen import RunBuilder, SeriesSpec, context_for
from runcli import mpiscope, run_ok

from mpiscope.engine.build import REPO
from mpiscope.cli.report import write_report
from mpiscope.store.ingest import ingest

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    args = ("-n", 3, "--bench", "pingpong,bw,allreduce,alltoall", "--sizes", "8,4K,64K", "--reps-max", 200)
    a, _ = run_ok(*args, out=out)
    b, _ = run_ok(*args, "--sync", "barrier", out=out)
    return out, a, b


def _browser():
    from selenium import webdriver

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1280,2000"):
        opts.add_argument(flag)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(options=opts, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))


def test_report_renders_in_chromium_without_console_errors(two_runs, tmp_path):
    assert CHROMIUM and CHROMEDRIVER, "chromium and chromium-driver are installed by make setup"
    out, a, b = two_runs
    p = mpiscope("report", a.name, b.name, "-o", tmp_path / "report.html", out=out)
    assert p.returncode == 0, p.stderr
    html = (tmp_path / "report.html").read_text()
    # self-contained: nothing is fetched from anywhere
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    driver = _browser()
    try:
        driver.get((tmp_path / "report.html").as_uri())
        assert driver.title.startswith("mpiscope report")
        sections = {e.get_attribute("id") for e in driver.find_elements("css selector", "section")}
        assert {"bench-pingpong-mpi", "bench-allreduce-mpi", "bench-alltoall-mpi", "context"} <= sections
        # every figure rendered with a size
        figures = driver.find_elements("css selector", "figure svg")
        assert len(figures) >= 8 and all(f.size["width"] > 100 for f in figures)
        headings = [h.text for h in driver.find_elements("css selector", "h2, h3")]
        assert any(h.startswith("Comparison:") for h in headings)
        for part in ("model fit", "distribution at each size", "tails", "modes", "ranks"):
            assert any(part in h for h in headings), part
        errors = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]
        assert errors == []
        shot = tmp_path / "report.png"
        assert driver.save_screenshot(str(shot)) and shot.stat().st_size > 10000
    finally:
        driver.quit()
    keep = REPO / "build" / "test-artifacts"
    keep.mkdir(parents=True, exist_ok=True)
    shutil.copy(shot, keep / "report-screenshot.png")  # for a person to look at after the tests


def test_labels_from_data_are_escaped(tmp_path):
    evil = '<script>alert("x")</script>'
    run_dir = tmp_path / "20240101-000000-evil"
    rb = RunBuilder(run_dir, nranks=2, hosts={0: evil, 1: "n1"})
    rb.add(SeriesSpec("pingpong", 8, [1e-6, 1.1e-6, 0.9e-6]))
    rb.write()
    ctx = context_for(run_id=run_dir.name, benches=["pingpong"], command=["mpiscope", evil])
    (run_dir / "context.json").write_text(json.dumps(ctx))
    ingest(run_dir, ctx)
    html = write_report([run_dir], tmp_path / "r.html").read_text()
    assert evil not in html
    assert "&lt;script&gt;alert(" in html


def test_report_refuses_a_run_named_twice(two_runs, tmp_path):
    out, a, _ = two_runs
    p = mpiscope("report", a.name, a.name, "-o", tmp_path / "r.html", out=out)
    assert p.returncode == 2 and "named twice" in p.stderr
    assert not (tmp_path / "r.html").exists()


def test_retransmission_timeouts_are_flagged_in_the_report(tmp_path):
    # 95% of samples near 1 ms, 5% near 201 ms: the second mode is 1x RTO_min after the first.
    import numpy as np

    rng = np.random.default_rng(5)
    values = np.where(rng.random(400) < 0.05, 0.201, 0.001) * rng.lognormal(0, 0.02, 400)
    run_dir = tmp_path / "20240101-000000-rto0"
    rb = RunBuilder(run_dir, nranks=2)
    rb.add(SeriesSpec("pingpong", 262144, list(values)))
    rb.write()
    ctx = context_for(run_id=run_dir.name, benches=["pingpong"])
    (run_dir / "context.json").write_text(json.dumps(ctx))
    ingest(run_dir, ctx)
    html = write_report([run_dir], tmp_path / "r.html").read_text()
    assert "yes: 1× RTO_min" in html
