# SPDX-License-Identifier: BSD-3-Clause
"""Text and JSON forms of a Comparison (compare.py).

Medians are shown as `show` shows them: microseconds for times, MB/s
(1e6 B/s) for bandwidths. The ratio is B / A of the numbers shown.
"""

from __future__ import annotations

from mpiscope.stats.compare import Comparison, describe_keys
from mpiscope.common.documents import json_document
from mpiscope.views.text import table
from mpiscope.views.show import describe
from mpiscope.store.series import bench_label


def _median(value, unit) -> str:
    return f"{value * 1e6:.2f}" if unit == "s" else f"{value / 1e6:.2f}"


def _p(p) -> str:
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def _percent(x) -> str:
    return f"{x * 100:g}%"


def _summary(cmp: Comparison) -> str:
    g = cmp.geomean
    counts = cmp.counts()
    change = g.point - 1.0
    if abs(change) < 0.0005:
        how = "B as fast as A"
    else:
        how = f"B {abs(change) * 100:.1f}% {'slower' if change > 0 else 'faster'}"
    if g.low <= 1.0 <= g.high:
        how += " (the CI includes 1)"
    return (
        f"geometric mean of time ratios B/A (bandwidths inverted) over {len(cmp.judged)} "
        f"benchmark × sizes: {g.point:.3f} [{g.low:.3f}, {g.high:.3f}], {how}; "
        f"{counts['faster']} faster, {counts['slower']} slower, {counts['same']} same"
    )


def format_compare(cmp: Comparison) -> str:
    ci = f"ci{round(cmp.level * 100):d}"
    out = [
        f"A: {describe(cmp.a)}",
        f"B: {describe(cmp.b)}",
        f"ratio = median B / median A, {round(cmp.level * 100)}% CI by bootstrap "
        f"({cmp.n_boot} resamples, seed {cmp.seed}); p: two-sided Mann-Whitney U; "
        f"faster/slower needs p < {cmp.alpha:g} and the CI outside 1 ± {_percent(cmp.noise)}",
    ]
    header = [
        "bench",
        "size(B)",
        "unit",
        "n A",
        "n B",
        "median A",
        "median B",
        "ratio",
        f"{ci}_low",
        f"{ci}_high",
        "p",
        "verdict",
    ]
    right = [False, True, False, True, True, True, True, True, True, True, True, False]
    lines = []
    for r in cmp.rows:
        lines.append(
            [
                bench_label(r.bench, r.algo),
                str(r.size),
                "us" if r.unit == "s" else "MB/s",
                str(r.n_a),
                str(r.n_b),
                _median(r.median_a, r.unit),
                _median(r.median_b, r.unit),
                f"{r.ratio.point:.3f}",
                f"{r.ratio.low:.3f}",
                f"{r.ratio.high:.3f}",
                _p(r.p_value),
                r.verdict,
            ]
        )
    out.append(table(header, lines, right))
    if cmp.geomean is not None:
        out.append(_summary(cmp))
    few = cmp.counts()["insufficient"]
    if few:
        out.append(
            f"insufficient ({few}): fewer than {cmp.min_samples} valid samples in a run, the "
            f"fewest for a median's 95% CI and a U test that can reach p < {cmp.alpha:g}; "
            "no verdict, not in the geometric mean: measure more repetitions (--reps-min)"
        )
    if cmp.only_a:
        out.append(f"only in A (not compared): {describe_keys(cmp.only_a)}")
    if cmp.only_b:
        out.append(f"only in B (not compared): {describe_keys(cmp.only_b)}")
    for (bench, algo, size), reason in cmp.skipped:
        out.append(f"not compared: {bench_label(bench, algo)} {size} B: {reason}")
    return "\n".join(out) + "\n"


def compare_json(cmp: Comparison) -> str:
    """The comparison as JSON: medians in base units (s or B/s), NaN as null."""
    return json_document("compare", cmp.to_dict())
