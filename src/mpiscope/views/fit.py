# SPDX-License-Identifier: BSD-3-Clause
"""Text and JSON forms of a FitResult (fits.py).

Values are kept in base units by the computation; here α is shown in
microseconds, β in nanoseconds per byte, bandwidths in MB/s (1e6 B/s, as
`show` and OSU do) and n½ in bytes.
"""

from __future__ import annotations

from mpiscope.models.fits import FitResult
from mpiscope.common.sizes import format_size
from mpiscope.common.documents import json_document
from mpiscope.views.text import interval, sig, table
from mpiscope.views.show import describe
from mpiscope.store.series import bench_label


def _size(n) -> str:
    return f"{format_size(int(n))} B"


def _range(first, last) -> str:
    return f"{format_size(int(first))}-{format_size(int(last))}"


def _sizes(sizes) -> str:
    if len(sizes) == 0:
        return "no sizes"
    if len(sizes) == 1:
        return f"1 size, {_size(sizes[0])}"
    return f"{len(sizes)} sizes, {_range(sizes[0], sizes[-1])} B"


def _pct(x) -> str:
    return f"{100.0 * x:.1f}%"


def _r2(x) -> str:
    return "-" if x != x else f"{x:.4f}"


def _bandwidth(line) -> str:
    """1/β in MB/s, only where β > 0 (else it is no bandwidth)."""
    return sig(line.bandwidth.point / 1e6) if line.beta.point > 0 else "-"


def _hockney_lines(h, ci) -> list[str]:
    positive = h.alpha.point > 0 and h.beta.point > 0
    rows = [
        ["α", sig(h.alpha.point * 1e6), "us", interval(h.alpha.low * 1e6, h.alpha.high * 1e6)],
        ["β", sig(h.beta.point * 1e9), "ns/B", interval(h.beta.low * 1e9, h.beta.high * 1e9)],
        [
            "1/β",
            _bandwidth(h),
            "MB/s",
            interval(h.bandwidth.low / 1e6, h.bandwidth.high / 1e6) if h.beta.point > 0 else "-",
        ],
        [
            "n½ = α/β",
            sig(h.n_half.point) if positive else "-",
            "B",
            interval(h.n_half.low, h.n_half.high) if positive else "-",
        ],
    ]
    text = table(["", "value", "unit", ci], rows, [False, True, False, False])
    out = ["    " + line for line in text.splitlines()]
    out.append(f"    R² {_r2(h.r2)}, largest residual {_pct(h.max_rel_residual)} at {_size(h.worst_size)}")
    return out


def _piecewise_lines(pw, ci) -> list[str]:
    k = pw.n_segments
    if pw.breaks:
        where = "; ".join(f"between {_size(a)} and {_size(b)}" for a, b in pw.breaks)
        head = f"  piecewise: {k} segments ({pw.criterion}), break{'s' if k > 2 else ''} {where}"
    else:
        head = f"  piecewise: 1 segment ({pw.criterion}): no break found"
    header = ["sizes(B)", "n", "α(us)", f"α {ci}", "β(ns/B)", f"β {ci}", "1/β(MB/s)", "R²", "max res"]
    right = [False, True, True, False, True, False, True, True, True]
    rows = []
    for s in pw.segments:
        rows.append(
            [
                _range(s.first_size, s.last_size),
                str(s.n_sizes),
                sig(s.alpha.point * 1e6),
                interval(s.alpha.low * 1e6, s.alpha.high * 1e6),
                sig(s.beta.point * 1e9),
                interval(s.beta.low * 1e9, s.beta.high * 1e9),
                _bandwidth(s),
                _r2(s.r2),
                _pct(s.max_rel_residual),
            ]
        )
    return [head] + ["    " + line for line in table(header, rows, right).splitlines()]


def format_fit(result: FitResult) -> str:
    """Per benchmark: the Hockney fit, then the piecewise table."""
    ci = f"ci{round(result.level * 100):d}"
    out = [
        describe(result.run),
        f"models fitted to per-size medians; {round(result.level * 100)}% CIs: bootstrap "
        f"over the samples of each size ({result.n_boot} resamples, seed {result.seed})",
    ]
    if not result.fits:
        out.append("(no measurements to fit)")
    for f in result.fits:
        c = f.curve
        out.append("")
        out.append(f"{bench_label(c.bench, c.algo)}: {c.quantity}, {_sizes(c.sizes)}")
        for size, reason in c.dropped:
            out.append(f"  left out {_size(size)}: {reason}")
        if f.hockney is None:
            out.append(f"  {f.note}")
            continue
        out.append(f"  Hockney T(n) = α + β·n ({f.hockney.method})")
        out.extend(_hockney_lines(f.hockney, ci))
        out.extend(_piecewise_lines(f.piecewise, ci))
        out.extend(f"  FLAG: {flag}" for flag in f.flags)
    return "\n".join(out) + "\n"


def fit_json(result: FitResult) -> str:
    """The fits as JSON: base units (s, s/B, B/s, B), NaN and infinity as null."""
    return json_document("fit", result.to_dict())
