# SPDX-License-Identifier: BSD-3-Clause
"""Renders report data into one self-contained HTML file (no network needed:
styles inline, figures inline SVG). Links to the documentation site are
relative to the directory the file is written to (`report_dir`, default the
current one; docs_links.py)."""

import math
from importlib import resources

import jinja2
from markupsafe import Markup

from mpiscope.report import docs_links


def _num(value, digits=2):
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if isinstance(value, int):
        return str(value)
    return f"{value:,.{digits}f}"


def _pct(value, digits=1):
    return "–" if value is None else f"{100 * value:.{digits}f}%"


def _share(value):
    """lower / MPI: a share up to 100%, above it a ratio (the layer is slower)."""
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:.3g}×" if value > 1 else f"{100 * value:.0f}%"


def _count(value) -> str:
    """A count that is an average (calls per operation): whole when it is whole."""
    return str(int(value)) if float(value).is_integer() else f"{value:.4g}"


def _environment(report_dir):
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(resources.files("mpiscope.report") / "templates")),
        autoescape=True,  # every label taken from data is escaped
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = _num
    env.filters["pct"] = _pct
    env.filters["share"] = _share
    env.filters["count"] = _count
    # Figures are SVG we drew ourselves (matplotlib escapes the text in them).
    env.filters["svg"] = lambda s: Markup(s) if s else ""
    env.globals["doc"] = docs_links.linker(report_dir)  # {{ doc("how-to/quality-flags") }}
    return env


def render(template, data, report_dir="."):
    """The page `template` (report.html.j2, tune_report.html.j2, app.html.j2,
    profile.html.j2, history.html.j2) rendered with `data` and the report's style sheet."""
    css = (resources.files("mpiscope.report") / "templates" / "style.css").read_text()
    return _environment(report_dir).get_template(template).render(css=Markup(css), **data)
