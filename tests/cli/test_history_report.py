# SPDX-License-Identifier: BSD-3-Clause
"""The history page (`mpiscope history --report FILE`): per series a trend
chart with every run's median and interval and a dashed line at each change
point, and what changed at each; built from synthetic nights of stored runs
(history_runs.py, a 10% step where the MPI version changes), rendered by
headless Chromium with no console errors. No MPI."""

import re
from html import unescape

import pytest

from browser import CHROMEDRIVER, CHROMIUM, browser, no_console_errors_and_kept
from history_runs import noisy_levels, write_night, write_series
from mpiscope.cli.main import main

STEP_AT = 12


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("history-page")
    out = tmp / "runs"
    ids = write_series(out, noisy_levels(24, STEP_AT, 0.10, seed=3), changed_from=STEP_AT,
                       mpi_version="4.1.6")
    for i in range(3):   # a second series, pingpong 8 B, with no change
        write_night(out, 30 + i, {("pingpong", 8): 1e-6 * (1 + 0.001 * i)})
    target = tmp / "history.html"
    assert main(["history", str(out), "--report", str(target), "--check"]) == 5   # still slower
    return target, ids


def test_the_page_shows_each_series_its_runs_and_what_changed(page):
    target, ids = page
    html = target.read_text()
    sections = re.findall(r'<section id="series-\d+">(.*?)</section>', html, re.S)
    assert len(sections) == 2
    stepped = next(s for s in sections if "allreduce 64K B" in s)
    assert stepped.count("<circle") == len(ids)                   # a dot for every run
    assert len(re.findall(r"stroke-dasharray", stepped)) == 1      # one change point
    text = unescape(re.sub(r"<[^>]+>", " ", stepped))
    assert f"from run {ids[STEP_AT]}" in text and "slower by" in text
    assert re.search(r"MPI version\s+4\.1\.5\s+4\.1\.6", text)
    assert ids[STEP_AT - 1] in text                               # the run before it
    quiet = next(s for s in sections if "pingpong 8 B" in s)
    assert "No change point." in quiet and "stroke-dasharray" not in quiet
    assert "--check: the newest run is regression" in unescape(stepped)
    assert "--check: the newest run is same" in unescape(quiet)


def test_a_page_in_a_missing_directory_is_refused_before_anything_is_read(tmp_path, capsys):
    write_series(tmp_path / "runs", noisy_levels(6, seed=1))
    with pytest.raises(SystemExit) as exc:
        main(["history", str(tmp_path / "runs"), "--report", str(tmp_path / "gone" / "h.html")])
    assert exc.value.code == 2 and "gone" in capsys.readouterr().err
    assert not (tmp_path / "gone").exists()


def test_the_page_opens_in_chromium_without_console_errors(page):
    assert CHROMIUM and CHROMEDRIVER, "chromium and chromium-driver are installed by make setup"
    target, ids = page
    driver = browser()
    try:
        driver.get(target.as_uri())
        assert driver.title.startswith("mpiscope history")
        charts = driver.find_elements("css selector", "figure svg")
        assert len(charts) == 2 and all(c.size["width"] > 300 for c in charts)
        dots = charts[0].find_elements("css selector", "circle")
        assert len(dots) == len(ids) and all(d.is_displayed() for d in dots)
        no_console_errors_and_kept(driver, target.with_suffix(".png"), "history-page-screenshot.png")
    finally:
        driver.quit()
