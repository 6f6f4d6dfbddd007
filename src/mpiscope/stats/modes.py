# SPDX-License-Identifier: BSD-3-Clause
"""Modes of a distribution, and the ones that look like TCP retransmissions.
The density is a Gaussian kernel estimate (Silverman's robust bandwidth, on
log values when they span a decade), binned and convolved so that a million
samples need no subsampling; a coarse timer's ties are spread over their
tick. Valleys are removed, least significant first, until every mode stands
above the counting noise of its basin. A mode k · RTO_min after the main one
(k in `multiples`: the timeout, its doublings and their sums) is flagged as a
likely retransmission. Method: docs/explanation/statistics.md, "Modes and
retransmission timeouts"."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mpiscope.stats.bootstrap import percentile_of_sorted
from mpiscope.stats.rto import as_rto
from mpiscope.stats.summary import mean_var, median_unsorted

RTO_MULTIPLES = (1, 2, 3, 4, 7, 8)
RTO_TOLERANCE = 0.25  # of RTO_min, either side of k · RTO_min
LOG_SPAN = 10.0  # max/min from which the estimate is on log(value)
BINS_PER_BANDWIDTH = 5
KERNEL_REACH = 5.0  # the kernel is cut at 5 bandwidths
DEFAULT_GRID_MAX = 1 << 16
DEFAULT_Z = 3.0
DEFAULT_MIN_COUNT = 8
DEFAULT_TOP_SOURCES = 5


def factorize(labels) -> tuple[np.ndarray, list]:
    """(codes, names) with names[codes[i]] == labels[i]; fast for strings too."""
    arr = np.asarray(labels)
    if arr.dtype.kind in "iub":
        names, codes = np.unique(arr, return_inverse=True)
        return codes.astype(np.int64), names.tolist()
    enc = pc.dictionary_encode(pa.array(arr.astype(object), type=pa.string()))
    return (enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), enc.dictionary.to_pylist())


def silverman_bandwidth(y: np.ndarray) -> float:
    """0.9 · min(sd, IQR/1.349) · n^(-1/5) (sd alone when the IQR is 0), of
    sorted, finite `y`."""
    n = len(y)
    if n < 2:
        return 0.0
    _, _, var = mean_var(y)
    sd = math.sqrt(var)
    q1, q3 = percentile_of_sorted(y, 25.0), percentile_of_sorted(y, 75.0)
    spread = min(sd, (q3 - q1) / 1.349) if q3 > q1 else sd
    return 0.9 * spread * n**-0.2


def resolution(a: np.ndarray) -> float:
    """The data's resolution when ties dominate (a coarse timer makes at most
    n/2 distinct values): the median gap between consecutive distinct values
    of sorted `a`; else 0."""
    gaps = np.diff(a)
    distinct = np.count_nonzero(gaps)  # sorted: no gap is negative
    if distinct == 0 or distinct + 1 > len(a) / 2:
        return 0.0
    return median_unsorted(gaps[gaps > 0])


def _tick_cdf(a, q, scale):
    """Cumulative count (xp, fp) of sorted `a` when each distinct value u
    stands for [u - q/2, u + q/2] (cut halfway to its neighbours), piecewise
    linear, on the estimate's scale."""
    u, c = np.unique(a, return_counts=True)
    mids = (u[1:] + u[:-1]) / 2.0
    lo = np.maximum(u - q / 2.0, np.concatenate([[-np.inf], mids]))
    hi = np.minimum(u + q / 2.0, np.concatenate([mids, [np.inf]]))
    if scale == "log":
        lo = np.log(np.maximum(lo, u / 2.0))
        hi = np.log(hi)
    cum = np.cumsum(c).astype(np.float64)
    xp = np.column_stack([lo, hi]).ravel()
    fp = np.column_stack([cum - c, cum]).ravel()
    return xp, fp


def _runs_extrema(f):
    """Peak and valley bin indices of f (plateaus count once, at their middle).
    Peaks and valleys alternate, starting and ending with a peak."""
    change = np.flatnonzero(f[1:] != f[:-1]) + 1
    bounds = np.zeros(len(change) + 2, dtype=np.int64)  # where each run starts, then len(f)
    bounds[1:-1], bounds[-1] = change, len(f)
    starts, ends = bounds[:-1], bounds[1:]
    v = f[starts]
    left = np.empty_like(v)  # the value of each run's neighbour on the left (-inf: none), and right
    left[0], left[1:] = -np.inf, v[:-1]
    right = np.empty_like(v)
    right[-1], right[:-1] = -np.inf, v[1:]
    mid = (starts + ends - 1) // 2
    peaks = mid[(v > left) & (v > right)]
    # Neighbouring runs differ, so between two peaks lies one run below both
    # its neighbours: the lowest of that stretch.
    left[0] = right[-1] = np.inf
    lows = mid[(v < left) & (v < right)]
    if len(peaks) < 2:
        return peaks, np.array([], dtype=np.int64)
    return peaks, lows[(lows > peaks[0]) & (lows < peaks[-1])].astype(np.int64)


class _Basins:
    """Basins between valleys on the grid, merged until every valley is significant."""

    def __init__(self, f, counts, valleys, z, min_count):
        self.f = f
        # Python floats: a basin's count is one subtraction, as in float64
        self.ccounts = [0.0, *np.cumsum(counts).tolist()]
        self.valleys = valleys.tolist()
        self.z = z
        self.min_count = min_count

    def _side_score(self, i, level):
        """Basin i's excess over `level` against what it must exceed; basin i
        is bins [lo, hi) (a valley bin belongs to the basin on its right)."""
        valleys = self.valleys
        lo = valleys[i - 1] if i > 0 else 0
        hi = valleys[i] if i < len(valleys) else len(self.f)
        above = self.f[lo:hi] - level
        np.maximum(above, 0.0, out=above)
        excess = float(np.add.reduce(above))
        need = max(self.min_count, self.z * math.sqrt(self.ccounts[hi] - self.ccounts[lo]))
        return excess / need

    def merge(self):
        """Removes the least significant valley (score < 1: min of its two
        sides' scores) until none is left; a removal changes the sides that
        face the merged basin, and only those are scored again."""
        levels = self.f[self.valleys].tolist()
        side = self._side_score
        left = [side(j, level) for j, level in enumerate(levels)]
        right = [side(j + 1, level) for j, level in enumerate(levels)]
        scores = list(map(min, left, right))
        while scores:
            low = min(scores)
            if low >= 1.0:
                break
            j = scores.index(low)  # the first lowest, as np.argmin
            for kept in (self.valleys, levels, left, right, scores):
                del kept[j]
            # Basin j grew: valley j - 1's right side and valley j's left side face it.
            if j > 0:
                right[j - 1] = side(j, levels[j - 1])
                scores[j - 1] = min(left[j - 1], right[j - 1])
            if j < len(scores):
                left[j] = side(j, levels[j])
                scores[j] = min(left[j], right[j])
        return self.valleys


def detect_modes(
    values,
    sources=None,
    rto=None,
    *,
    source_names=None,
    scale: str = "auto",
    z: float = DEFAULT_Z,
    min_count: int = DEFAULT_MIN_COUNT,
    multiples=RTO_MULTIPLES,
    tolerance: float = RTO_TOLERANCE,
    grid_max: int = DEFAULT_GRID_MAX,
    top_sources: int = DEFAULT_TOP_SOURCES,
) -> dict:
    """Modes of `values` (seconds; non-finite ones ignored), in increasing location.

    `sources` labels each value (rank "3", pair "0->1"; with `source_names`, indices
    into it); `rto` is RTO_min in s or rto.rto_min()'s dict; `scale` "auto", "log"
    or "linear". Returns {"n", "scale", "bandwidth", "bandwidth_rule", "grid_bins",
    "resolution", "method", "rto": {"rto_min_s", "source", "multiples",
    "tolerance_s"}, "main", "modes": [{"location" (the density's peak), "median",
    "low", "high" (the basin in the samples), "count", "weight", "sources" (top
    ones, with `sources`: "source", "count", "share_of_mode", "share_of_source"),
    "gap_s" (from the main mode), "rto_suspect", "rto_multiple"}]}."""
    a, order = _sorted_finite(values)
    n = len(a)
    rto_info = as_rto(rto)
    rto_min_s = rto_info["rto_min_s"]
    rto_info.update({"multiples": list(multiples), "tolerance_s": tolerance * rto_min_s})
    if scale not in ("auto", "log", "linear"):
        raise ValueError(f"scale must be auto, log or linear, not {scale!r}")
    if scale == "auto":
        scale = "log" if n and a[0] > 0 and a[-1] >= LOG_SPAN * a[0] else "linear"
    if scale == "log" and n and not a[0] > 0:
        raise ValueError("a log scale needs positive values")
    out = {
        "n": n,
        "scale": scale,
        "bandwidth": math.nan,
        "bandwidth_rule": "silverman",
        "grid_bins": 0,
        "resolution": None,
        "rto": rto_info,
        "main": None,
        "modes": [],
        "method": (
            f"Gaussian KDE on {'log(value)' if scale == 'log' else 'value'}, "
            f"Silverman bandwidth, binned; modes kept when each side of a valley "
            f"has >= max({min_count}, {z:g}·sqrt(n_basin)) samples above it"
        ),
    }
    if n == 0:
        return out
    y = np.log(a) if scale == "log" else a
    h = silverman_bandwidth(y)
    out["bandwidth"] = h
    q = resolution(a)
    if q > 0:
        out["resolution"] = q
    if h > 0:
        cuts, peaks_y, out["grid_bins"] = _basins(a, y, h, q, scale, z, min_count, grid_max, peaks=True)
    else:
        cuts, peaks_y = [], [y[0]]  # every value is the same
    codes, names = _source_codes(sources, source_names, order)
    totals = np.bincount(codes, minlength=len(names)) if codes is not None else None
    modes = [
        _mode(a, s, e, peaks_y[i], scale, codes, names, totals, top_sources)
        for i, (s, e) in enumerate(zip([0] + cuts, cuts + [n]))
        if e > s
    ]
    out["main"] = _flag_rto(modes, rto_min_s, multiples, tolerance)
    out["modes"] = modes
    return out


def mode_weights(values, *, z: float = DEFAULT_Z, min_count: int = DEFAULT_MIN_COUNT) -> list[float]:
    """The weights of detect_modes' modes (same scale, bandwidth and basins), in
    increasing location, without describing each mode."""
    a = np.sort(np.asarray(values, dtype=np.float64).ravel())
    return mode_weights_sorted(a[np.isfinite(a)], z=z, min_count=min_count)


def mode_weights_sorted(a: np.ndarray, *, z: float = DEFAULT_Z, min_count: int = DEFAULT_MIN_COUNT) -> list[float]:
    """mode_weights of values already sorted and finite (nothing sorted again)."""
    n = len(a)
    if n == 0:
        return []
    scale = "log" if a[0] > 0 and a[-1] >= LOG_SPAN * a[0] else "linear"
    y = np.log(a) if scale == "log" else a
    h = silverman_bandwidth(y)
    if not h > 0:
        return [1.0]
    cuts = _basins(a, y, h, resolution(a), scale, z, min_count, DEFAULT_GRID_MAX)[0]
    bounds = [0, *cuts, n]
    return [(e - s) / n for s, e in zip(bounds, bounds[1:]) if e > s]


def _sorted_finite(values):
    """The finite values sorted, and the original index of each."""
    raw = np.asarray(values, dtype=np.float64).ravel()
    order = np.flatnonzero(np.isfinite(raw))
    perm = np.argsort(raw[order])
    return raw[order][perm], order[perm]


def _basins(a, y, h, q, scale, z, min_count, grid_max, peaks=False):
    """The binned density's basins: (sorted positions where basins start,
    each basin's peak in the density's scale when `peaks`, else [], number
    of bins)."""
    xp, fp = _tick_cdf(a, q, scale) if q > 0 else (None, None)
    first = min(y[0], xp[0]) if q > 0 else y[0]
    last = max(y[-1], xp[-1]) if q > 0 else y[-1]
    lo = first - KERNEL_REACH * h
    span = (last - first) + 2 * KERNEL_REACH * h
    nbins = int(min(grid_max, max(256, math.ceil(span / (h / BINS_PER_BANDWIDTH)))))
    dx = span / nbins
    b = np.minimum(np.maximum(((y - lo) / dx).astype(np.int64), 0), nbins - 1)  # np.clip, less its overhead
    if q > 0:
        # Each tick of a coarse timer stands for the interval it rounds:
        # spread its samples evenly over it, or every tick is a mode.
        counts = np.diff(np.interp(lo + dx * np.arange(nbins + 1), xp, fp))
    else:
        counts = np.bincount(b, minlength=nbins).astype(np.float64)
    reach = int(math.ceil(KERNEL_REACH * h / dx))
    kernel = np.exp(-0.5 * (np.arange(-reach, reach + 1) * dx / h) ** 2)
    f = np.convolve(counts, kernel / kernel.sum())[reach : reach + nbins]
    f[f < 1e-12 * f.max()] = 0.0
    _, valleys = _runs_extrema(f)
    valleys = _Basins(f, counts, valleys, z, min_count).merge()
    cuts = np.searchsorted(b, valleys, side="left").tolist()
    peaks_y = []
    for i in range(len(valleys) + 1 if peaks else 0):
        blo = valleys[i - 1] if i > 0 else 0
        bhi = valleys[i] if i < len(valleys) else nbins
        peaks_y.append(lo + (blo + int(np.argmax(f[blo:bhi])) + 0.5) * dx)
    return cuts, peaks_y, nbins


def _source_codes(sources, source_names, order):
    """(code of each sorted value's source, source names), or (None, None)."""
    if sources is None:
        return None, None
    if source_names is not None:
        return np.asarray(sources, dtype=np.int64)[order], list(source_names)
    return factorize(np.asarray(sources)[order])


def _mode(a, s, e, peak_y, scale, codes, names, totals, top_sources):
    """The mode of the sorted values a[s:e], with its top sources (`totals`:
    every source's count over all values)."""
    seg = a[s:e]
    loc = float(np.exp(peak_y)) if scale == "log" else float(peak_y)
    mode = {
        "location": loc,
        "median": float(np.median(seg)),
        "low": float(seg[0]),
        "high": float(seg[-1]),
        "count": int(e - s),
        "weight": (e - s) / len(a),
    }
    if codes is not None:
        c = np.bincount(codes[s:e], minlength=len(names))
        top = np.argsort(-c, kind="stable")[:top_sources]
        mode["sources"] = [
            {
                "source": names[k],
                "count": int(c[k]),
                "share_of_mode": float(c[k]) / (e - s),
                "share_of_source": float(c[k]) / float(totals[k]),
            }
            for k in top
            if c[k] > 0
        ]
    return mode


def _flag_rto(modes, rto_min_s, multiples, tolerance) -> int:
    """Marks the modes a whole number of RTO_min after the main one; returns the main's index."""
    main = max(range(len(modes)), key=lambda i: (modes[i]["count"], -i))
    main_loc = modes[main]["location"]
    for i, mode in enumerate(modes):
        gap = mode["location"] - main_loc
        mode["gap_s"] = gap
        mode["rto_suspect"], mode["rto_multiple"] = False, None
        if i == main or gap <= 0 or not rto_min_s > 0:
            continue
        k = min(multiples, key=lambda m: abs(gap - m * rto_min_s))
        if abs(gap - k * rto_min_s) <= tolerance * rto_min_s:
            mode["rto_suspect"], mode["rto_multiple"] = True, int(k)
    return main
