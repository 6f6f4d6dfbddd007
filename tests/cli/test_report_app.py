# SPDX-License-Identifier: BSD-3-Clause
"""The report of an app run (`mpiscope report RUN` of `mpiscope app
compare`'s run): one page with the measured answer, the prediction beside
it, the what-if at more ranks, the profile's section and the tune's. Built
from a synthetic app run: a traced profile of 4 ranks in the profiler's raw
format (ingested), a real tune.json (tests/data/tune-replay), launches
stored by the app run's writer, the prediction and the what-if computed by
app/speedup_prediction.py and app/scale.py. Rendered by headless Chromium with no
console errors; its links lead to the documentation's pages."""

import re
import shutil
from html import unescape
from urllib.parse import unquote

import pytest

from mpiscope.app.answer import summarize
from mpiscope.app.compare import prediction_of
from mpiscope.app.launch import Launch
from mpiscope.app.profile_cells import profile_times
from mpiscope.app.scale import whatif
from mpiscope.app.app_run import Writer
from mpiscope.app.tune_cells import read_tune
from mpiscope.cli.report import write_report
from mpiscope.engine.build import REPO
from mpiscope.report import docs_links
from mpiscope.sim.costs import SimCosts
from mpiscope.sim.simulate import Extras
from profilegen import write_profile
from browser import CHROMEDRIVER, CHROMIUM, browser, no_console_errors_and_kept

P = 4
TUNE = REPO / "tests" / "data" / "tune-replay" / "expected" / "openmpi-adaptive" / "tune.json"
PROFILE = "20240101-000000-prof"
OPTIONS = {"noise": 0.02, "alpha": 0.05, "level": 0.95, "seed": 1, "n_boot": 500}


def _trace(r):
    """(call, t0, t1, bytes, peer or root, communicator size, communicator index) of one step."""
    return [("MPI_Irecv", 0.0, 1e-6, 4096, (r - 1) % P, P, 0),
            ("MPI_Send", 2e-6, 4e-4, 4096, (r + 1) % P, P, 0),
            ("MPI_Wait", 5e-4, 6e-4, 0, -1, 0, -1),
            ("MPI_Allreduce", 1e-3, 6e-3, 65536, -1, P, 0),
            ("MPI_Bcast", 7e-3, 8e-3, 1024, 0, P, 0)]


@pytest.fixture(scope="module")
def app_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("app")
    out = tmp / "runs"
    # Per rank 10 s: 3 s in allreduce 64-128 KiB, 1 s in bcast 1-2 KiB, 0.5 s in sends.
    cells = [("MPI_Allreduce", P, "node", 17, 100, 6553600, 3.0), ("MPI_Bcast", P, "node", 11, 100, 102400, 1.0),
             ("MPI_Send", P, "node", 13, 100, 409600, 0.5), ("MPI_Irecv", P, "node", 13, 100, 409600, 0.01)]
    write_profile(out / PROFILE, P, 10.0, {r: cells for r in range(P)}, {r: _trace(r) for r in range(P)},
                  {r: [list(range(P))] for r in range(P)}, run_id=PROFILE)
    tune = tmp / "tune"
    tune.mkdir()
    shutil.copy(TUNE, tune / "tune.json")
    configs = [{"name": "default", "kind": "default", "source": "default", "env": {}},
               {"name": "tuned", "kind": "tune", "source": str(tune), "env": {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1"}}]
    context = {"run_id": "20240101-000001-app0", "label": None, "command": ["mpiscope", "app", "compare"],
               "launch_command": ["mpirun", "-n", "4", "./app"], "application": ["./app"], "mpi": "openmpi",
               "np": P, "configs": configs, "baseline": "default",
               "value": {"metric": None, "what": "wall time of the launch", "lower_is_better": True},
               "options": {**OPTIONS, "warmup": 1}, "seed": 1}
    writer = Writer(out, context)
    k = 0
    for rnd in range(6):
        for name, wall in (("default", 10.0), ("tuned", 8.9)):
            status = "failed" if (rnd, name) == (5, "tuned") else "ok"
            writer.add(Launch(k, name, max(rnd, 1), rnd == 0, "2024-01-01T00:00:00", wall + 0.01 * (rnd % 3),
                              0 if status == "ok" else 1, None, status,
                              None if status == "ok" else "exit code 1: a rank stopped", ""))
            k += 1
    answer = {**summarize(writer.launches, ["default", "tuned"], "default", OPTIONS, False), "stop": "ci"}
    answer["prediction"] = prediction_of(("tuned", profile_times(out / PROFILE), read_tune(tune)), answer, False, 1)
    answer["whatif"] = whatif(out / PROFILE, tune, [8], SimCosts(alpha_s=1e-4, beta_s=8e-8),
                              Extras(replicates=3, seed=2)).to_dict()
    run_dir = writer.finish(answer, status="completed", error=None, stop="ci", duration_s=1.0)
    return run_dir, tmp


def test_the_page_has_every_part(app_run):
    run_dir, tmp = app_run
    html = write_report([run_dir], tmp / "app.html").read_text()
    sections = set(re.findall(r'<section id="([^"]+)"', html))
    assert {"app-answer", "app-prediction", "app-whatif", "profile-1", "tune-1"} <= sections
    text = unescape(re.sub(r"<[^>]+>", " ", html))
    assert "they agree" in text or "they do not agree" in text
    assert "allreduce" in text and "nonoverlapping" in text          # the cell the tune changed, and its rule
    assert "launch 11 (tuned, round 5)" in " ".join(text.split())    # the failed launch, named
    assert "Where the time goes: the profile" in text and "What the tune changed" in text
    # self-contained: nothing fetched from anywhere
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)


def test_the_page_links_to_the_tutorial_and_the_validation_page(app_run):
    run_dir, tmp = app_run
    where = tmp / "reports"
    where.mkdir(exist_ok=True)
    html = write_report([run_dir], where / "app.html").read_text()
    links = {unquote(h) for h in re.findall(r'<a href="([^"#][^"]*)"', html)}
    for page in ("tutorials/make-application-faster", "validation/app-loop"):
        target = docs_links.page_file(page)
        assert target.resolve() in {(where / h).resolve() for h in links}, page
        assert docs_links.PAGES[page] in html


def test_an_app_run_makes_a_report_of_its_own(app_run):
    from mpiscope.common.errors import UsageError

    run_dir, tmp = app_run
    with pytest.raises(UsageError, match="report of its own"):
        write_report([run_dir, run_dir.parent / PROFILE], tmp / "x.html")
    assert not (tmp / "x.html").exists()


def test_the_page_opens_in_chromium_without_console_errors(app_run):
    assert CHROMIUM and CHROMEDRIVER, "chromium and chromium-driver are installed by make setup"
    run_dir, tmp = app_run
    page = write_report([run_dir], tmp / "chromium.html")
    driver = browser()
    try:
        driver.get(page.as_uri())
        assert driver.title.startswith("mpiscope application report")
        charts = driver.find_elements("css selector", "figure svg")
        assert len(charts) >= 3 and all(c.size["width"] > 100 for c in charts)
        no_console_errors_and_kept(driver, tmp / "app-report.png", "app-report-screenshot.png")
    finally:
        driver.quit()
