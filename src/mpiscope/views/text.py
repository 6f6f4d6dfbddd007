# SPDX-License-Identifier: BSD-3-Clause
"""Small helpers shared by the analysis views: fixed-width tables, numbers
with a few significant digits, JSON without NaN."""

from __future__ import annotations

import math


def table(header, lines, right) -> str:
    """Columns padded to their widest cell, two spaces apart; `right[i]`
    right-aligns column i. No trailing blanks."""
    widths = [max([len(h)] + [len(line[i]) for line in lines]) for i, h in enumerate(header)]

    def fmt(cells):
        out = [c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right)]
        return "  ".join(out).rstrip()

    return "\n".join([fmt(header)] + [fmt(line) for line in lines])


def sig(x, digits: int = 4) -> str:
    """`x` with about `digits` significant digits in fixed-point notation:
    1234.6 -> '1235', 12.345 -> '12.35', 0.0012345 -> '0.001235'.
    NaN -> '-', infinities -> 'inf' / '-inf'."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    x = float(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    text = f"{x:.{decimals}f}"
    return "0" if float(text) == 0 else text


def us(seconds, digits: int = 5) -> str:
    """Seconds as microseconds with about `digits` significant digits; None -> '-'."""
    return sig(None if seconds is None else seconds * 1e6, digits)


def interval(low, high, digits: int = 4) -> str:
    return f"[{sig(low, digits)}, {sig(high, digits)}]"
