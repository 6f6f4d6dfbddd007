# SPDX-License-Identifier: BSD-3-Clause
"""The documentation site built and checked against the repository: the site
builds strictly (no broken link, no page left out of the navigation), every
validation page shows a bench script's committed data, and project text
(every file git tracks) holds no development history or internal document
numbers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from docs_text import DOCS, REPO, occasion_hits

sys.path.insert(0, str(REPO / "scripts" / "docs"))
import validation_data  # noqa: E402  (the site's hook that renders a validation page's data)

MKDOCS = Path(sys.executable).with_name("mkdocs")


def test_site_builds_strictly(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    p = subprocess.run([str(MKDOCS), "build", "--strict", "--quiet", "-d", str(tmp_path / "site")],
                       cwd=REPO, capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    for page in ("index.html", "reference/cli/run/index.html", "reference/api/index.html",
                 "validation/index.html"):
        assert (tmp_path / "site" / page).is_file(), page
    cli = (tmp_path / "site" / "reference/cli/run/index.html").read_text()
    assert "--time-budget" in cli and "--reps-min" in cli  # generated from the parser
    loads, paths = [], []
    for page in (tmp_path / "site").rglob("*.html"):
        html = page.read_text()
        loads += [f"{page.name}: {m}" for m in EXTERNAL_LOAD.findall(html)]
        paths += occasion_hits(str(page.relative_to(tmp_path / "site")), html)
    assert not loads, f"the site loads from the internet (it must read offline): {loads[:5]}"
    assert not paths, "machine paths or episodes in the built site:\n" + "\n".join(paths[:20])


# A stylesheet, script, font or image fetched from another host when a page
# is opened (links to other sites are fine: they load nothing).
EXTERNAL_LOAD = re.compile(r"<(?:link|script|img|iframe)\b[^>]*\b(?:href|src)=[\"']?(?:https?:)?//[^\"' >]+",
                           re.IGNORECASE)


VALIDATION = DOCS / "validation"
DATA_PAGES = sorted(p for p in VALIDATION.glob("*.md") if p.stem not in ("index", "known-limitations"))


@pytest.mark.parametrize("page", DATA_PAGES, ids=lambda p: p.stem)
def test_validation_page_shows_committed_bench_data(page):
    text = page.read_text()
    files = validation_data.MARKER.findall(text)
    assert files, f"{page.name} shows no bench data (<!-- bench-data: FILE.json -->)"
    for name in files:
        data = page.parent / name
        tracked = subprocess.run(["git", "ls-files", "--error-unmatch", str(data)], cwd=REPO,
                                 capture_output=True).returncode == 0
        assert tracked, f"{data} is not committed"
        doc = validation_data.load(data)  # context and tables, as the page renders them
        script = doc["context"]["command"].split()[1]
        assert (REPO / script).is_file(), script
        assert Path(script).name in text, f"{page.name} does not name {script}"
        assert all(t["rows"] for t in doc["tables"]), f"{name} has an empty table"


# Development history and internal document numbers, as they appear in text
# (built from parts so that this file does not match itself).
DIARY = re.compile("|".join([
    r"\b[Ss]tops? [0-9]{1,2}\b", "this " + "stop", r"\bseed 00[0-4]\b", "thesis " + "000",
    r"\bpaper 00[0-4]\b", "dissertation " + "002", r"tried[^.]{0,40}not kept", r"\bGo [0-9]+ \(",
    "Measured " + "here", "PLACE" + "HOLDER", "load " + "average",
]))


def test_no_development_history_in_project_text():
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                           text=True).stdout.split("\0")
    hits = []
    for name in filter(None, files):
        path = REPO / name
        if not path.is_file() or path.suffix in (".parquet", ".png", ".raw", ".duckdb"):
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if DIARY.search(line):
                hits.append(f"{name}:{n}: {line.strip()[:100]}")
    assert not hits, "development history or internal numbers:\n" + "\n".join(hits[:40])


def test_the_report_pictures_are_drawn_by_make_docs(tmp_path):
    """scripts/docs/report_screenshot.py, which `make docs` runs, draws both
    pictures of a report the pages show, from a synthetic run in Chromium."""
    p = subprocess.run([sys.executable, str(REPO / "scripts" / "docs" / "report_screenshot.py"),
                        "--out-dir", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    for name in ("report-overview.png", "report-series.png"):
        data = (tmp_path / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000, name
        width = int.from_bytes(data[16:20], "big")  # the IHDR chunk
        assert width >= 1000, (name, width)
        assert f"images/{name}" in (DOCS / "getting-started" / "first-run.md").read_text()
        assert (DOCS / "images" / name).is_file(), f"docs/images/{name} is not committed"
