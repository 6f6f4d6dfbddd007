"""Figures for the report, drawn with matplotlib and returned as inline SVG text."""

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

plt.rcParams.update({
    "svg.fonttype": "none",   # keep text as text: smaller files, selectable labels
    "svg.hashsalt": "mpiscope",  # identical input gives identical SVG
    "font.size": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
})
COLORS = plt.rcParams["axes.prop_cycle"].by_key()["color"]


def _svg(fig):
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]  # drop the XML prolog: the SVG is inlined in HTML


def _size_axis(ax, sizes):
    if len(sizes) and min(sizes) > 0 and max(sizes) / min(sizes) > 16:
        ax.set_xscale("log", base=2)
    ax.set_xlabel("message size (bytes)")


def curve(series_by_label, ylabel, log_y=True, refined=()):
    """Median against size with its CI band, one line per label.

    series_by_label: {label: (sizes, medians, lows, highs)}; `refined`: sizes
    added by --refine, marked with open circles.
    """
    fig, ax = plt.subplots(figsize=(7, 3.6))
    all_sizes = []
    for i, (label, (sizes, med, lo, hi)) in enumerate(series_by_label.items()):
        color = COLORS[i % len(COLORS)]
        ax.fill_between(sizes, lo, hi, color=color, alpha=0.25, linewidth=0)
        ax.plot(sizes, med, "-o", color=color, markersize=3, label=label)
        marked = [(s, m) for s, m in zip(sizes, med) if s in set(refined)]
        if marked:
            ax.plot(*zip(*marked), "o", markerfacecolor="white", markeredgecolor=color, markersize=6,
                    label=f"{label}: refined sizes")
        all_sizes += list(sizes)
    _size_axis(ax, all_sizes)
    if log_y:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.legend(loc="best", fontsize=8)
    return _svg(fig)


def distributions(values_by_size, ylabel):
    """One violin per size (log axis when the values span more than a decade),
    with the median marked."""
    sizes = list(values_by_size)
    data = [np.asarray(values_by_size[s], dtype=float) for s in sizes]
    data = [d[np.isfinite(d) & (d > 0)] for d in data]
    keep = [i for i, d in enumerate(data) if len(d)]
    fig, ax = plt.subplots(figsize=(max(4.0, 0.5 * len(keep) + 2), 3.4))
    if keep:
        data = [data[i] for i in keep]
        labels = [str(sizes[i]) for i in keep]
        span = max(d.max() for d in data) / min(d.min() for d in data)
        log = span > 10
        plotted = [np.log10(d) if log else d for d in data]
        parts = ax.violinplot(plotted, showmedians=True, showextrema=True, widths=0.8)
        for body in parts["bodies"]:
            body.set_alpha(0.5)
        ax.set_xticks(range(1, len(labels) + 1), labels, rotation=45, ha="right")
        if log:
            lo, hi = np.floor(min(p.min() for p in plotted)), np.ceil(max(p.max() for p in plotted))
            ticks = np.arange(lo, hi + 1)
            ax.set_yticks(ticks, [f"{10 ** t:g}" for t in ticks])
        ax.set_ylabel(ylabel + (" (log)" if log else ""))
    ax.set_xlabel("message size (bytes)")
    return _svg(fig)


def heatmap(matrix, ylabel="rank", clabel="time (µs)", max_columns=1500):
    """Ranks × repetitions; columns are pooled (max) when there are too many."""
    m = np.asarray(matrix, dtype=float)
    if m.shape[1] > max_columns:
        step = int(np.ceil(m.shape[1] / max_columns))
        cut = m.shape[1] // step * step
        m = np.nanmax(m[:, :cut].reshape(m.shape[0], -1, step), axis=2)
        xlabel = f"repetition (max of each {step})"
    else:
        xlabel = "repetition"
    fig, ax = plt.subplots(figsize=(7, 0.25 * m.shape[0] + 1.6))
    finite = m[np.isfinite(m)]
    vmax = np.percentile(finite, 99) if finite.size else 1
    img = ax.imshow(m, aspect="auto", interpolation="nearest", cmap="viridis", vmin=0, vmax=vmax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_yticks(range(m.shape[0]))
    ax.grid(False)
    fig.colorbar(img, ax=ax, label=clabel + " (clipped at p99)")
    return _svg(fig)


def fit_residuals(sizes, medians, predicted, breakpoints, ylabel):
    """Measured medians with the fitted model, and relative residuals below."""
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 4.2), sharex=True,
                                      gridspec_kw={"height_ratios": [2, 1]})
    top.plot(sizes, medians, "o", markersize=3, label="median")
    top.plot(sizes, predicted, "-", label="model")
    for b in breakpoints:
        for ax in (top, bottom):
            ax.axvline(b, color="grey", linestyle="--", linewidth=0.8)
    top.set_ylabel(ylabel)
    top.set_yscale("log")
    top.legend(fontsize=8)
    rel = (np.asarray(medians) - np.asarray(predicted)) / np.asarray(medians)
    bottom.plot(sizes, 100 * rel, "o-", markersize=3)
    bottom.axhline(0, color="black", linewidth=0.6)
    bottom.set_ylabel("residual (%)")
    _size_axis(bottom, sizes)
    return _svg(fig)
