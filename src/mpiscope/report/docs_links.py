# SPDX-License-Identifier: BSD-3-Clause
"""Links from a written file (the HTML reports) to the documentation site.

`make docs` builds docs/ into <checkout>/build/site/, a page a directory
(docs/how-to/quality-flags.md becomes build/site/how-to/quality-flags/index.html).
From a checkout (found as engine/locations.py finds it) a link is the relative
path from the written file's directory to that page, which opens from disk with
no server; an installed package has no site, so the page is named by its source,
docs/<page>.md, unlinked. Every link goes through `doc_link`; the name shown is
the page's title in mkdocs.yml's navigation, kept in `PAGES`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from markupsafe import Markup

from mpiscope.engine.locations import CHECKOUT

# Pages the outputs link to: page (docs/<page>.md) -> its title in mkdocs.yml's nav.
PAGES = {
    "how-to/quality-flags": "Act on a quality flag",
    "explanation/peer-methods": "The peers' methods",
    "tutorials/make-application-faster": "Make my application faster",
    "validation/app-loop": "Application speedups, predicted and measured",
    "explanation/history": "History and change points",
}


@dataclass(frozen=True)
class DocLink:
    page: str  # "how-to/quality-flags"
    title: str  # "Act on a quality flag"
    href: str | None  # relative URL of the built page; None without a checkout

    @property
    def source(self) -> str:
        """The page's source file: docs/<page>.md."""
        return f"docs/{self.page}.md"

    def html(self) -> Markup:
        """An <a> with the page's title as its text; without a checkout the
        title and the source file, unlinked."""
        if self.href is None:
            return Markup("{} (<code>{}</code>)").format(self.title, self.source)
        return Markup('<a href="{}">{}</a>').format(self.href, self.title)


def site_root(checkout: Path | None = CHECKOUT) -> Path | None:
    """Where `make docs` writes the site: <checkout>/build/site; None outside a checkout."""
    return None if checkout is None else checkout / "build" / "site"


def page_file(page: str, checkout: Path | None = CHECKOUT) -> Path | None:
    """The built page's file, <site>/<page>/index.html (None outside a checkout)."""
    root = site_root(checkout)
    return None if root is None else root.joinpath(*page.split("/"), "index.html")


def doc_link(page: str, from_dir, checkout: Path | None = CHECKOUT) -> DocLink:
    """The link to docs page `page` (a key of PAGES) from a file written in
    directory `from_dir`."""
    if page not in PAGES:
        raise KeyError(f"no documentation page '{page}' is known to docs_links.PAGES")
    target = page_file(page, checkout)
    href = None
    if target is not None:
        rel = os.path.relpath(target, Path(from_dir).resolve())
        href = quote(Path(rel).as_posix())
    return DocLink(page, PAGES[page], href)


def linker(from_dir, checkout: Path | None = CHECKOUT):
    """The templates' `doc(page)`: the page's link as HTML, from `from_dir`."""
    return lambda page: doc_link(page, from_dir, checkout).html()
