# SPDX-License-Identifier: BSD-3-Clause
"""The HTML report of two real 3-rank Open MPI runs: rendered by a real
headless Chromium with no console errors, self-contained; a run named twice
is refused."""

import re

import pytest
from browser import CHROMEDRIVER, CHROMIUM, browser, no_console_errors_and_kept
from runcli import mpiscope, run_ok



@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    args = ("-n", 3, "--bench", "pingpong,bw,allreduce,alltoall", "--sizes", "8,4K,64K", "--reps-max", 200)
    a, _ = run_ok(*args, out=out)
    b, _ = run_ok(*args, "--sync", "barrier", out=out)
    return out, a, b


def test_report_renders_in_chromium_without_console_errors(two_runs, tmp_path):
    assert CHROMIUM and CHROMEDRIVER, "chromium and chromium-driver are installed by make setup"
    out, a, b = two_runs
    p = mpiscope("report", a.name, b.name, "-o", tmp_path / "report.html", out=out)
    assert p.returncode == 0, p.stderr
    html = (tmp_path / "report.html").read_text()
    # self-contained: nothing is fetched from anywhere
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)
    driver = browser()
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
        no_console_errors_and_kept(driver, tmp_path / "report.png", "report-screenshot.png")
    finally:
        driver.quit()


def test_report_refuses_a_run_named_twice(two_runs, tmp_path):
    out, a, _ = two_runs
    p = mpiscope("report", a.name, a.name, "-o", tmp_path / "r.html", out=out)
    assert p.returncode == 2 and "named twice" in p.stderr
    assert not (tmp_path / "r.html").exists()
