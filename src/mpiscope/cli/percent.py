# SPDX-License-Identifier: BSD-3-Clause
"""A relative threshold on the command line: 2% or 0.02. Standard library
only, so that a command's parser may check it without importing SciPy."""

from mpiscope.common.errors import UsageError


def parse_percent(text: str, option: str = "--noise") -> float:
    """'2%' -> 0.02; '0.02' -> 0.02. A bare number of 1 or more is refused
    (write 2% for two percent)."""
    raw = str(text).strip()
    try:
        if raw.endswith("%"):
            value = float(raw[:-1]) / 100.0
        else:
            value = float(raw)
            if value >= 1.0:
                raise UsageError(f"{option} {raw}: a fraction must be below 1; for percent write {raw}%")
    except ValueError:
        raise UsageError(f"{option} '{raw}' is not a number: write 2% or 0.02") from None
    if not 0.0 <= value < 1.0:
        raise UsageError(f"{option} {raw} must be at least 0% and below 100%")
    return value
