# SPDX-License-Identifier: BSD-3-Clause
"""Figures for the report, drawn with matplotlib and returned as inline SVG
text (figures.py makes and exports them)."""

import numpy as np
from matplotlib import cbook

# timechart.py draws with plots.plt, plots.COLORS and plots._svg as well.
from mpiscope.report.figures import COLORS, figure, log_scale, plt, svg as _svg


def _size_axis(ax, sizes):
    if len(sizes) and min(sizes) > 0 and max(sizes) / min(sizes) > 16:
        log_scale(ax, "x", base=2)
    ax.set_xlabel("message size (bytes)")


def curve(series_by_label, ylabel, log_y=True, refined=()):
    """Median against size with its CI band, one line per label.

    series_by_label: {label: (sizes, medians, lows, highs)}; `refined`: sizes
    added by --refine, marked with open circles.
    """
    fig, (ax,) = figure("curve", (7, 3.6), lambda f: f.subplots())
    all_sizes = []
    for i, (label, (sizes, med, lo, hi)) in enumerate(series_by_label.items()):
        color = COLORS[i % len(COLORS)]
        ax.fill_between(sizes, lo, hi, color=color, alpha=0.25, linewidth=0)
        ax.plot(sizes, med, "-o", color=color, markersize=3, label=label)
        marked = [(s, m) for s, m in zip(sizes, med) if s in set(refined)]
        if marked:
            ax.plot(
                *zip(*marked),
                "o",
                markerfacecolor="white",
                markeredgecolor=color,
                markersize=6,
                label=f"{label}: refined sizes",
            )
        all_sizes += list(sizes)
    _size_axis(ax, all_sizes)
    if log_y:
        log_scale(ax, "y")
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
    # Its own kind when empty: the rotated size labels would stay on a kept figure's ticks.
    fig, (ax,) = figure(
        "distributions" if keep else "distributions, empty",
        (max(4.0, 0.5 * len(keep) + 2), 3.4),
        lambda f: f.subplots(),
    )
    if keep:
        data = [data[i] for i in keep]
        labels = [str(sizes[i]) for i in keep]
        span = max(d.max() for d in data) / min(d.min() for d in data)
        log = span > 10
        plotted = [np.log10(d) if log else d for d in data]
        # As ax.violinplot(plotted, ...) draws it, with the density computed faster.
        parts = ax.violin(cbook.violin_stats(plotted, _density), widths=0.8, showmedians=True, showextrema=True)
        for body in parts["bodies"]:
            body.set_alpha(0.5)
        ax.set_xticks(range(1, len(labels) + 1), labels, rotation=45, ha="right")
        if log:
            lo, hi = np.floor(min(p.min() for p in plotted)), np.ceil(max(p.max() for p in plotted))
            ticks = np.arange(lo, hi + 1)
            ax.set_yticks(ticks, [f"{10**t:g}" for t in ticks])
        ax.set_ylabel(ylabel + (" (log)" if log else ""))
    ax.set_xlabel("message size (bytes)")
    return _svg(fig)


# A violin's density is summed over at most this many samples.
KDE_SAMPLES = 20_000


def _density(x, coords):
    """Gaussian kernel density of the samples `x` at `coords`, with Scott's
    bandwidth: what violinplot computes (mlab.GaussianKDE), but for all points
    at once instead of a Python loop over them, which took a quarter of a
    violin figure's time. Above KDE_SAMPLES samples the kernels are summed
    over evenly spaced order statistics: the same shape (to 1/KDE_SAMPLES of
    the distribution) at a bounded cost, while the bandwidth, median and
    extremes still come from every sample."""
    if np.all(x[0] == x):
        return (x[0] == coords).astype(float)  # one value: violinplot's own fallback
    var = np.var(x, ddof=1) * len(x) ** -0.4  # the variance times Scott's factor n^(-1/5), squared
    if len(x) > KDE_SAMPLES:
        x = np.sort(x)[np.linspace(0, len(x) - 1, KDE_SAMPLES).round().astype(int)]
    density = np.empty(len(coords))
    step = max(1, 2**22 // len(x))  # points per block: at most 4 M kernel values in memory
    for i in range(0, len(coords), step):
        d = x[None, :] - coords[i : i + step, None]
        density[i : i + step] = np.exp(-0.5 * d * d / var).sum(axis=1)
    return density / (len(x) * np.sqrt(2 * np.pi * var))


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
    fig, (top, bottom) = figure(
        "fit_residuals", (7, 4.2), lambda f: f.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [2, 1]})
    )
    top.plot(sizes, medians, "o", markersize=3, label="median")
    top.plot(sizes, predicted, "-", label="model")
    for b in breakpoints:
        for ax in (top, bottom):
            ax.axvline(b, color="grey", linestyle="--", linewidth=0.8)
    top.set_ylabel(ylabel)
    log_scale(top, "y")
    top.legend(fontsize=8)
    rel = (np.asarray(medians) - np.asarray(predicted)) / np.asarray(medians)
    bottom.plot(sizes, 100 * rel, "o-", markersize=3)
    bottom.axhline(0, color="black", linewidth=0.6)
    bottom.set_ylabel("residual (%)")
    _size_axis(bottom, sizes)
    return _svg(fig)


# ---------------------------------------------------------------- LogGP and layers (loggp_data.py)


def _est_arrays(ests):
    """(points, lower errors, upper errors) of Estimates (NaN for None)."""
    pts = np.array([np.nan if e is None else e.point for e in ests], dtype=float)
    lo = np.array([np.nan if e is None else e.point - e.low for e in ests], dtype=float)
    hi = np.array([np.nan if e is None else e.high - e.point for e in ests], dtype=float)
    return pts, np.clip(np.nan_to_num(lo), 0, None), np.clip(np.nan_to_num(hi), 0, None)


def overheads_on_eel(rows, base_size):
    """Left: at the base size, o_s and o_r stacked inside the EEL bar (Bell et al. (2003),
    Figure 3); right: EEL, o_s and o_r against size. rows: [(size, EEL, o_s, o_r)] as
    Estimates in µs (None when not measured)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(8, 3.4), gridspec_kw={"width_ratios": [1, 2.4]})
    base = next((r for r in rows if r[0] == base_size), None)
    if base is not None:
        _, eel, o_s, o_r = base
        if eel is not None:
            left.bar(0, eel.point, width=0.8, color="#dddddd", edgecolor="black", label="EEL")
        s = o_s.point if o_s is not None else 0.0
        r = o_r.point if o_r is not None else 0.0
        if o_s is not None:
            left.bar(0, s, width=0.45, color=COLORS[0], label="o_s")
        if o_r is not None:
            left.bar(0, r, width=0.45, bottom=s, color=COLORS[1], label="o_r")
        left.set_xticks([0], [f"{base_size} B"])
        left.set_ylabel("time (µs)")
        left.legend(fontsize=7, loc="upper right")
        left.set_xlim(-0.8, 0.8)
    left.set_title("overheads on EEL", fontsize=9)
    sizes = [r[0] for r in rows]
    for i, name in enumerate(("EEL", "o_s", "o_r")):
        pts, lo, hi = _est_arrays([r[i + 1] for r in rows])
        ok = np.isfinite(pts) & (pts > 0)
        if ok.any():
            right.errorbar(
                np.array(sizes)[ok],
                pts[ok],
                yerr=[lo[ok], hi[ok]],
                fmt="-o",
                markersize=3,
                capsize=2,
                color="black" if name == "EEL" else COLORS[i - 1],
                label=name,
            )
    total = [(r[0], r[2].point + r[3].point) for r in rows if r[2] is not None and r[3] is not None]
    if total:
        right.plot(*zip(*total), ":", color="grey", label="o_s + o_r")
    _size_axis(right, sizes)
    log_scale(right, "y")
    right.set_ylabel("time (µs)")
    right.legend(fontsize=7, loc="best")
    return _svg(fig)


def gap_by_queue_depth(gaps):
    """g(m, q) against the queue depth q, one line per size. gaps: {size: {q: Estimate µs}}."""
    fig, ax = plt.subplots(figsize=(7, 3.4))
    for i, size in enumerate(sorted(gaps)):
        qs = sorted(gaps[size])
        pts, lo, hi = _est_arrays([gaps[size][q] for q in qs])
        ax.errorbar(
            qs, pts, yerr=[lo, hi], fmt="-o", markersize=3, capsize=2, color=COLORS[i % len(COLORS)], label=f"{size} B"
        )
    log_scale(ax, "x", base=2)
    log_scale(ax, "y")
    ax.set_xlabel("queue depth q (sends outstanding)")
    ax.set_ylabel("gap per message (µs)")
    ax.legend(fontsize=7, loc="best", ncol=2)
    return _svg(fig)


def gap_per_size(best, g, G):
    """The least gap per size with the LogGP line g + G·m and the size g/G
    from which messages are bandwidth-bound. best: {size: Estimate µs};
    g in µs, G in µs per byte."""
    fig, ax = plt.subplots(figsize=(7, 3.4))
    sizes = sorted(best)
    pts, lo, hi = _est_arrays([best[s] for s in sizes])
    ax.errorbar(sizes, pts, yerr=[lo, hi], fmt="o", markersize=3, capsize=2, label="flood, least gap")
    if g is not None and G is not None and G > 0 and sizes:
        xs = np.geomspace(max(min(sizes), 1), max(sizes), 100)
        ax.plot(xs, g + G * xs, "-", color=COLORS[1], label="g + G·m")
        ax.axhline(g, color="grey", linestyle=":", linewidth=0.8, label="g")
        cross = g / G
        if min(sizes) <= cross <= max(sizes) * 4:
            ax.axvline(cross, color=COLORS[2], linestyle="--", linewidth=0.8, label=f"g/G = {cross:.0f} B")
    _size_axis(ax, sizes)
    log_scale(ax, "y")
    ax.set_ylabel("time per message (µs)")
    ax.legend(fontsize=7, loc="best")
    return _svg(fig)


def layer_curves(curves):
    """Side by side: ping-pong (half round trip) and stream (bandwidth) per layer.
    curves: {bench: {layer: {size: Estimate µs}}}."""
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    for ax, bench in zip(axes, ("layer_pingpong", "layer_bw")):
        layers = curves.get(bench, {})
        all_sizes = []
        for i, (layer, by_size) in enumerate(layers.items()):
            sizes = sorted(s for s in by_size if s > 0 or bench == "layer_pingpong")
            if not sizes:
                continue
            all_sizes += sizes
            pts, lo, hi = _est_arrays([by_size[s] for s in sizes])
            if bench == "layer_bw":
                mbs = np.array(sizes) / pts  # B/µs = MB/s
                ax.plot(sizes, mbs, "-o", markersize=3, color=COLORS[i % len(COLORS)], label=layer)
            else:
                ax.errorbar(
                    sizes,
                    pts,
                    yerr=[lo, hi],
                    fmt="-o",
                    markersize=3,
                    capsize=2,
                    color=COLORS[i % len(COLORS)],
                    label=layer,
                )
        _size_axis(ax, all_sizes)
        log_scale(ax, "y")
        ax.set_ylabel("half round trip (µs)" if bench == "layer_pingpong" else "bandwidth (MB/s)")
        ax.set_title("ping-pong" if bench == "layer_pingpong" else "stream", fontsize=9)
        if layers:
            ax.legend(fontsize=7, loc="best")
    return _svg(fig)


# ---------------------------------------------------------------- transport lab (transport_data.py)


def transport_curves(panels):
    """One panel per benchmark: a line per design, MPI's own paths dashed.
    panels: [{"title", "bw": values in B/s, "lines": {label: {size: median}}}]."""
    n = len(panels)
    fig = plt.figure(figsize=(9, 3.2 * ((n + 1) // 2)))
    for k, panel in enumerate(panels):
        ax = fig.add_subplot((n + 1) // 2, 2, k + 1)
        sizes_all = []
        for i, (label, by_size) in enumerate(sorted(panel["lines"].items())):
            sizes = sorted(s for s in by_size if s > 0)
            if not sizes:
                continue
            sizes_all += sizes
            ys = [by_size[s] / 1e6 if panel["bw"] else by_size[s] * 1e6 for s in sizes]
            ax.plot(
                sizes,
                ys,
                "--" if label.startswith("MPI") else "-o",
                markersize=3,
                color=COLORS[i % len(COLORS)],
                label=label,
            )
        _size_axis(ax, sizes_all)
        log_scale(ax, "y")
        ax.set_title(panel["title"], fontsize=9)
        ax.legend(fontsize=6, loc="best")
    fig.tight_layout()
    return _svg(fig)


def size_histogram(bins_by_call, labels):
    """Messages per log2 size bin, by count (left) and by bytes (right), a bar group per call."""
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
    calls = list(bins_by_call)
    width = 0.8 / max(len(calls), 1)
    for ax, what, title in ((axes[0], "count", "share of messages"), (axes[1], "bytes", "share of bytes")):
        for i, call in enumerate(calls):
            b = bins_by_call[call]
            total = sum(b[what].values()) or 1
            xs = sorted(b[what])
            ax.bar([x + i * width for x in xs], [b[what][x] / total for x in xs], width, label=call)
        ax.set_title(title)
        ax.set_xlabel("message size (log2 bin)")
        ticks = sorted({x for call in calls for x in bins_by_call[call]["count"]})
        ax.set_xticks(ticks)
        ax.set_xticklabels([labels[t] for t in ticks], rotation=60, fontsize=7)
    axes[0].legend(fontsize=7)
    return _svg(fig)


def comm_matrix(matrix, clabel="bytes sent"):
    """The communication matrix as a heat map: row sender, column receiver."""
    m = np.asarray(matrix, dtype=float)
    fig, ax = plt.subplots(figsize=(4.8 + 0.05 * len(m), 4 + 0.05 * len(m)))
    img = ax.imshow(m, interpolation="nearest", cmap="viridis", vmin=0)
    ax.set_xlabel("to rank")
    ax.set_ylabel("from rank")
    ax.grid(False)
    fig.colorbar(img, ax=ax, label=clabel)
    return _svg(fig)


# ---------------------------------------------------------------- tuning (tune_data.py)


def winner_map(maps):
    """Per collective, the winning algorithm per message size (columns) and
    communicator size (rows), one colour per algorithm.
    maps: [{"title", "sizes": labels, "ps", "names", "grid": [[index or -1]]}]."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    n = len(maps)
    fig, axes = plt.subplots(n, 1, figsize=(8, sum(0.9 + 0.35 * len(m["ps"]) for m in maps) + 0.4), squeeze=False)
    for ax, m in zip(axes[:, 0], maps):
        grid = np.ma.masked_less(np.asarray(m["grid"], dtype=float), 0)
        colors = [COLORS[i % len(COLORS)] for i in range(max(len(m["names"]), 1))]
        ax.imshow(
            grid, aspect="auto", interpolation="nearest", cmap=ListedColormap(colors), vmin=-0.5, vmax=len(colors) - 0.5
        )
        ax.set_xticks(range(len(m["sizes"])))
        ax.set_xticklabels(m["sizes"], rotation=60, fontsize=7)
        ax.set_yticks(range(len(m["ps"])))
        ax.set_yticklabels([str(p) for p in m["ps"]])
        ax.set_ylabel("ranks")
        ax.set_title(m["title"], fontsize=9)
        ax.grid(False)
        ax.legend(
            handles=[Patch(color=colors[i], label=name) for i, name in enumerate(m["names"])],
            fontsize=7,
            loc="upper left",
            bbox_to_anchor=(1.01, 1.0),
        )
    axes[-1, 0].set_xlabel("message size (engine's: bytes per rank)")
    fig.tight_layout()
    return _svg(fig)


# ---------------------------------------------------------------- peers' methods (methods_data.py)


def method_terms(panels, causes):
    """Per size, one horizontal bar per tool: the terms of its difference from
    mpiscope's median, stacked from zero (percent of the median), a diamond
    at the difference itself. panels: [{"title", "tools": [names],
    "terms": {cause: [percent per tool]}, "difference": [percent per tool]}];
    causes: the causes in their order (one colour each)."""
    from matplotlib.patches import Patch

    n = len(panels)
    fig, axes = plt.subplots(
        n, 1, figsize=(7.5, sum(0.7 + 0.32 * len(p["tools"]) for p in panels) + 0.6), squeeze=False
    )
    color = {c: COLORS[i % len(COLORS)] for i, c in enumerate(causes)}
    color["unexplained"] = "#b0b0b0"  # no cause: grey, apart from the measured ones
    for ax, p in zip(axes[:, 0], panels):
        y = np.arange(len(p["tools"]))
        pos, neg = np.zeros(len(y)), np.zeros(len(y))
        for cause in causes:
            v = np.nan_to_num(np.asarray(p["terms"].get(cause, [0.0] * len(y)), dtype=float))
            left = np.where(v >= 0, pos, neg)
            ax.barh(y, v, left=left, height=0.6, color=color[cause])
            pos, neg = pos + np.maximum(v, 0), neg + np.minimum(v, 0)
        ax.plot(p["difference"], y, "D", color="black", markersize=4)
        ax.axvline(0, color="black", linewidth=0.8)
        ax.set_yticks(y)
        ax.set_yticklabels(p["tools"])
        ax.invert_yaxis()
        ax.set_title(p["title"], fontsize=9)
    axes[-1, 0].set_xlabel("difference from mpiscope's median (% of the median); ◆ the whole difference")
    fig.legend(
        handles=[Patch(color=color[c], label=c.replace("_", " ")) for c in causes],
        fontsize=7,
        loc="upper center",
        ncol=min(len(causes), 4),
        bbox_to_anchor=(0.5, 1.0),
    )
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    return _svg(fig)
