# SPDX-License-Identifier: BSD-3-Clause
"""How the report's figures are made and turned into inline SVG, fast.

Profiled on a 323-series run (bench/report_speed.py), its 55 figures took
two thirds of the report's time, and little of it drawing: parsing mathtext
tick labels, creating matplotlib's tick objects afresh for every figure
(about 1 ms each, 50 or more per log axis) and savefig's extra layout pass
for bbox_inches="tight". Hence plain-text log labels, one figure per kind
kept and emptied for the next (its tick objects reused; the SVG is the same
as a new figure's), and the tight box computed without that pass.
"""

import io
import re

import matplotlib

matplotlib.use("Agg")  # no display needed, whatever the environment says
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.backends.backend_svg import RendererSVG  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import LogFormatterSciNotation  # noqa: E402

plt.rcParams.update(
    {
        "svg.fonttype": "none",  # keep text as text: smaller files, selectable labels
        "svg.hashsalt": "mpiscope",  # identical input gives identical SVG
        "font.size": 9,
        "axes.grid": True,
        "grid.alpha": 0.3,
    }
)
COLORS = plt.rcParams["axes.prop_cycle"].by_key()["color"]

# Figures of the same kind drawn one after another reuse one Figure; False
# draws every figure on a new one (the slow path, kept to check the output
# is the same).
REUSE = True
_kept = {}


def figure(kind, figsize, layout):
    """(figure, its axes) for a figure of `kind`: `layout(fig)` adds the axes
    to a new figure; a kept one is resized and emptied instead."""
    fig = _kept.get(kind) if REUSE else None
    if fig is None:
        fig = Figure(figsize=figsize)
        FigureCanvasAgg(fig)
        layout(fig)
        if REUSE:
            _kept[kind] = fig
    else:
        fig.set_size_inches(figsize)
        for ax in fig.axes:
            _empty(ax)
    return fig, fig.axes


def _empty(ax):
    """Back to a new axes' state, but keeping its tick objects."""
    for artist in [*ax.lines, *ax.collections, *ax.patches, *ax.images, *ax.texts]:
        artist.remove()
    if ax.legend_ is not None:
        ax.legend_.remove()
    ax.relim()  # no artists left: the next ones set the data limits afresh
    ax.set_autoscale_on(True)
    ax.set_prop_cycle(None)
    ax.set_title("")
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.set_xscale("linear")  # also back to the default locators and formatters
    ax.set_yscale("linear")


_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


class _LogTicks(LogFormatterSciNotation):
    """matplotlib's log-axis labels (2¹⁰, 10⁻¹, 3×10²) as plain text with
    Unicode superscripts instead of mathtext, which took seconds per report:
    its parse cache holds 50 strings, fewer than one figure's labels."""

    def __call__(self, x, pos=None):
        label = super().__call__(x, pos)
        m = re.fullmatch(r"\$\\mathdefault\{(.*)\}\$", label)
        if not m:
            return label
        text = re.sub(
            r"\^\{(-?\d+)\}", lambda e: e.group(1).translate(_SUPERSCRIPT), m.group(1).replace(r"\times", "×")
        )
        return label if re.search(r"[\\{}^$]", text) else text  # anything else stays mathtext


def log_scale(ax, which, base=10):
    """A log x or y axis labelled by _LogTicks (on every axes sharing it)."""
    getattr(ax, f"set_{which}scale")("log", base=base)
    for other in getattr(ax, f"get_shared_{which}_axes")().get_siblings(ax):
        axis = getattr(other, f"{which}axis")
        axis.set_major_formatter(_LogTicks(base))
        axis.set_minor_formatter(_LogTicks(base))


def _tight_bbox(fig):
    """The box savefig(bbox_inches="tight") crops SVG to, from the same
    renderer and resolution (72 dpi) but without drawing the figure first."""
    dpi = fig.dpi
    fig.dpi = 72
    try:
        w, h = fig.get_size_inches() * 72
        box = fig.get_tightbbox(RendererSVG(w, h, io.StringIO(), image_dpi=dpi))
    finally:
        fig.dpi = dpi
    pad = plt.rcParams["savefig.pad_inches"]
    return box.padded(pad, pad)


def svg(fig):
    """The figure as SVG text to inline in HTML (no XML prolog)."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches=_tight_bbox(fig), metadata={"Date": None})
    plt.close(fig)  # a pyplot figure; kept ones are not pyplot's, and stay
    text = buf.getvalue()
    return text[text.index("<svg") :]
