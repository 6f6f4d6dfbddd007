# SPDX-License-Identifier: BSD-3-Clause
"""What a run or a tune stored, checked as it is read back: a schema version
this mpiscope does not read, a number its writer never writes (NaN or an
infinity where the writer writes null, a count that is no whole number), a
context whose kind its files contradict. Each is refused naming the file
(UsageError, exit 2): a damaged value is never printed as a result.
Standard library only: `mpiscope runs` reads contexts."""

from __future__ import annotations

import math

from mpiscope.common.errors import UsageError

RESTORE = "restore it from a copy, or `mpiscope runs rm` the run"
# Whole numbers of a run's context: (key, lowest value).
CONTEXT_COUNTS = (("np", 1), ("launches", 1), ("seed", 0), ("schema_version", 1))


def non_finite(doc, at="") -> str | None:
    """Where `doc` (a JSON value) holds NaN or an infinity: 'a.b.0', or None."""
    if isinstance(doc, float):
        return at or "the document" if not math.isfinite(doc) else None
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for key, value in items:
        found = non_finite(value, f"{at}.{key}" if at else str(key))
        if found:
            return found
    return None


def _lookup(doc, at):
    for key in at.split("."):
        doc = doc[int(key)] if isinstance(doc, list) else doc[key]
    return doc


def finite(doc, path, hint=RESTORE):
    """Refuses a document with NaN or an infinity in it (its writer writes null)."""
    at = non_finite(doc)
    if at:
        raise UsageError(f"{path} is damaged: {at} is {_lookup(doc, at)}, a number mpiscope never writes; {hint}")
    return doc


def whole(value, low=0, high=None) -> bool:
    """Whether `value` is a whole number (not a bool) from `low` to `high`."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= low and (high is None or value <= high)


def version(doc, path, reads, what, hint=None):
    """Refuses a document whose schema_version is not `reads`, saying both numbers."""
    found = doc.get("schema_version", reads) if isinstance(doc, dict) else reads
    if found != reads:
        raise UsageError(
            f"{path} has {what} schema version {found!r}, which this mpiscope does not read "
            f"(it reads {reads}); " + (hint or "read it with the mpiscope that wrote it")
        )


def context(doc, path, hint=RESTORE) -> dict:
    """A run's context as read from `path`: a JSON object of the schema
    version this mpiscope reads, its counts whole numbers."""
    from mpiscope.store.layout import SCHEMA_VERSION

    if not isinstance(doc, dict):
        raise UsageError(f"{path} is damaged: it holds a JSON {type(doc).__name__}, not a run's context; {hint}")
    version(doc, path, SCHEMA_VERSION, "run context")
    for key, low in CONTEXT_COUNTS:
        value = doc.get(key)
        if value is not None and not whole(value, low):
            raise UsageError(f"{path} is damaged: '{key}' is {str(value)[:40]}, not a whole number from {low}; {hint}")
    rto = doc.get("rto_min")
    if rto is not None and not (isinstance(rto, dict) and _seconds(rto.get("rto_min_s"))):
        raise UsageError(f"{path} is damaged: its 'rto_min' holds no time in seconds; {hint}")
    return doc


def _seconds(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def table(tbl, schema, path, what, hint):
    """`tbl` (a pyarrow.Table ingest wrote) with the columns of `schema`, cast
    to its types; another table in its place is refused naming the file."""
    import pyarrow as pa

    missing = [f.name for f in schema if f.name not in tbl.column_names]
    if missing:
        raise UsageError(
            f"{what} {path} is damaged: it has no column '{missing[0]}' (another table in its place?); {hint}"
        )
    try:
        return tbl.select(schema.names).cast(schema)
    except (pa.ArrowException, ValueError) as e:
        raise UsageError(
            f"{what} {path} is damaged: its columns are not of the types mpiscope writes "
            f"({str(e).splitlines()[0][:120]}); {hint}"
        ) from None


MAX_TIMER_S = 1e10  # a timer read beyond this (three centuries) is no clock's


def timer_reads(tbl, names, path, what, hint):
    """Refuses a table whose time columns `names` hold an infinity or a time
    beyond MAX_TIMER_S (NaN is a time not taken); returns `tbl`."""
    import numpy as np

    from mpiscope.common.arrow_pandas import numpy_of

    import pyarrow.compute as pc

    for name in names:
        if name in tbl.column_names:
            # One pass that allocates nothing (NaN and null pass); the values only for the message.
            low, high = pc.min_max(tbl[name]).values()
            if not (abs(low.as_py() or 0.0) > MAX_TIMER_S or abs(high.as_py() or 0.0) > MAX_TIMER_S):
                continue
            v = np.asarray(numpy_of(tbl[name]), dtype=np.float64)
            bad = np.abs(v) > MAX_TIMER_S
            if bad.any():
                raise UsageError(
                    f"{what} {path} is damaged: {name} holds {v[bad][0]:g} s, a time no timer reads; {hint}"
                )
    return tbl


def timed_spans(start, end, what) -> str | None:
    """What is impossible in spans of local times the engine read (each a
    finite time, ending no earlier than it starts), or None."""
    import numpy as np

    if not (np.isfinite(start).all() and np.isfinite(end).all()):
        return f"{what} without its times, or with an infinite one"
    if (end < start).any():
        return f"{what} that ends before it starts"
    return None
