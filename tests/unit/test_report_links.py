# SPDX-License-Identifier: BSD-3-Clause
"""The HTML report's links to the documentation site: each is an <a> whose
relative target, resolved from the report's directory, is the page `make docs`
builds (<checkout>/build/site/<page>/index.html), with the page's title as its
text; without a checkout the page is named by its source, docs/<page>.md."""

import json
import re
from html import unescape
from urllib.parse import unquote

from rawgen import RunBuilder, SeriesSpec, context_for

from mpiscope.cli.report import write_report
from mpiscope.engine.build import REPO
from mpiscope.report import docs_links
from mpiscope.stats.rto import as_rto
from mpiscope.store.ingest import ingest

SITE = REPO / "build" / "site"


def _collective_run(tmp_path):
    run_dir = tmp_path / "runs" / "20240101-000000-link"
    rb = RunBuilder(run_dir, nranks=2)
    rb.add(SeriesSpec("pingpong", 8, [1e-6, 1.1e-6, 0.9e-6, 1.05e-6]))
    rb.add(SeriesSpec("allreduce", 8, [2e-6, 2.1e-6, 1.9e-6, 2.05e-6]))
    rb.write()
    ctx = context_for(run_id=run_dir.name, benches=["pingpong", "allreduce"],
                      rto_min=as_rto(0.2))  # read on the measured host, as the runner records it
    (run_dir / "context.json").write_text(json.dumps(ctx))
    ingest(run_dir, ctx)
    return run_dir


def _doc_links(html):
    """(href, text) of every link that is not within the report itself."""
    return [(unescape(h), unescape(re.sub(r"<[^>]+>", "", t)))
            for h, t in re.findall(r'<a href="([^"#][^"]*)">(.*?)</a>', html, re.S)]


def test_report_links_resolve_to_the_built_sites_pages(tmp_path):
    run_dir = _collective_run(tmp_path)
    report_dir = tmp_path / "elsewhere" / "reports"
    report_dir.mkdir(parents=True)
    html = write_report([run_dir], report_dir / "report.html").read_text()
    links = _doc_links(html)
    assert links, "the report links to the documentation"
    for href, text in links:
        assert not href.startswith(("/", "file:", "http")), href  # relative: the report stays self-contained
        target = (report_dir / unquote(href)).resolve()
        page = target.relative_to(SITE.resolve()).parent.as_posix()
        assert target == SITE.resolve() / page / "index.html", href
        assert docs_links.PAGES[page] in text, (page, text)
    page = "how-to/quality-flags"
    assert (SITE / page / "index.html").resolve() in {(report_dir / unquote(h)).resolve() for h, _ in links}
    assert "Act on a quality flag" in {t for _, t in links}
    assert "README" not in html


def test_without_a_checkout_the_page_is_named_by_its_source_and_not_linked(tmp_path):
    link = docs_links.doc_link("how-to/quality-flags", tmp_path, checkout=None)
    assert link.href is None
    text = str(link.html())
    assert "<a" not in text
    assert "Act on a quality flag" in text and "docs/how-to/quality-flags.md" in text


def test_every_linked_page_exists_under_its_title_in_the_sites_navigation():
    nav = (REPO / "mkdocs.yml").read_text()
    for page, title in docs_links.PAGES.items():
        assert (REPO / "docs" / f"{page}.md").is_file(), page
        assert re.search(rf"^\s*- {re.escape(title)}: {re.escape(page)}\.md\s*$", nav, re.M), (page, title)
