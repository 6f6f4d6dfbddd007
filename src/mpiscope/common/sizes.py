# SPDX-License-Identifier: BSD-3-Clause
"""Message size lists: `1,8,1K`, ranges `1-4M:x2` (multiply) or `0-64:+8` (add).

Units are binary: K = 1024 bytes, M = 1024 K, G = 1024 M; `B` or no unit is bytes.
"""

import math
import re

from mpiscope.common.errors import UsageError

MAX_SIZE = 2**31 - 1  # MPI counts are C ints
MAX_SIZES = 10_000  # sizes of one list: each is a series to measure; more is a typing error
MAX_STEPS = 1_000_000  # steps of a multiplying range walked to find its sizes
_UNITS = {
    "": 1,
    "B": 1,
    "K": 1024,
    "KB": 1024,
    "KIB": 1024,
    "M": 1024**2,
    "MB": 1024**2,
    "MIB": 1024**2,
    "G": 1024**3,
    "GB": 1024**3,
    "GIB": 1024**3,
}
_SIZE = re.compile(r"^\s*(\d+)\s*([A-Za-z]*)\s*$")
_HELP = "use byte counts with units B/K/M/G, lists (1,8,1K) and ranges (1-4M:x2 or 0-64:+8)"


def parse_size(text):
    m = _SIZE.match(text)
    unit = m and _UNITS.get(m.group(2).upper())
    if not m or unit is None:
        raise UsageError(f"--sizes: '{text}' is not a size; {_HELP}")
    value = int(m.group(1)) * unit
    if value > MAX_SIZE:
        raise UsageError(f"--sizes: {text} is larger than the largest MPI message of {MAX_SIZE} bytes")
    return value


def parse_size_option(name, text, minimum=0) -> int:
    """The size an option gives (`--segment 8K`), or a UsageError naming the option."""
    try:
        value = parse_size(str(text))
    except UsageError:
        raise UsageError(
            f"{name} '{text}' is not a size: write bytes with an optional unit B/K/M/G, e.g. 8, 64K, 4M"
        ) from None
    if value < minimum:
        raise UsageError(f"{name} must be at least {minimum} byte{'s' if minimum != 1 else ''}")
    return value


def _expand_range(item):
    span, _, step = item.partition(":")
    lo_text, _, hi_text = span.partition("-")
    if not lo_text.strip() or not hi_text.strip():
        raise UsageError(f"--sizes: '{item}' is neither a size nor a range LO-HI (sizes are never negative); {_HELP}")
    lo, hi = parse_size(lo_text), parse_size(hi_text)
    if lo > hi:
        raise UsageError(f"--sizes: range '{item}' runs backwards; write the smaller size first")
    step = step.strip() or "x2"
    try:
        factor = float(step[1:])
    except ValueError:
        factor = None
    if step[0] == "x" and factor and 1 < factor < math.inf:
        if lo == 0:
            raise UsageError(f"--sizes: the multiplying range '{item}' cannot start at 0; start at 1")
        steps = math.floor(math.log(hi / lo) / math.log(factor)) + 1
        _bounded(item, min(steps, hi - lo + 1), "up to ")
        if steps > MAX_STEPS:
            raise UsageError(f"--sizes: '{item}' takes {steps:,} steps of x{step[1:]}; use a larger factor")
        sizes, s = [], float(lo)
        while round(s) <= hi:
            if not sizes or round(s) != sizes[-1]:
                sizes.append(round(s))
            s *= factor
        return sizes
    if step[0] == "+" and factor and factor >= 1 and math.isfinite(factor) and factor == int(factor):
        _bounded(item, (hi - lo) // int(factor) + 1)
        return list(range(lo, hi + 1, int(factor)))
    raise UsageError(f"--sizes: step '{step}' in '{item}' must be xF (F > 1) or +N (N >= 1)")


def _bounded(what, n, about=""):
    if n > MAX_SIZES:
        raise UsageError(
            f"--sizes: '{what}' gives {about}{n:,} sizes, more than the {MAX_SIZES:,} "
            "one list may hold; use a larger step or fewer sizes"
        )


def parse_sizes(text):
    """Sorted, duplicate-free list of byte counts."""
    if not text or not text.strip():
        raise UsageError(f"--sizes is empty; {_HELP}")
    sizes = set()
    for item in text.split(","):
        if "-" in item:
            sizes.update(_expand_range(item))
        else:
            sizes.add(parse_size(item))
        _bounded(text if len(text) <= 60 else text[:60] + "…", len(sizes))
    return sorted(sizes)


def format_size(n):
    """1024 -> '1K', 1536 -> '1536'."""
    for unit, factor in (("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if n >= factor and n % factor == 0:
            return f"{n // factor}{unit}"
    return str(n)
