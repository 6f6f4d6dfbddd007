# SPDX-License-Identifier: BSD-3-Clause
"""What a tool's log says, whatever its format: the numbers it printed (one
Value per benchmark, variant and size) and what it knows of the run (date,
ranks, machine). A damaged line is refused with its file and number."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from datetime import datetime

from mpiscope.common.errors import UsageError


@dataclass(frozen=True)
class Value:
    """One number the tool printed, in seconds or bytes per second."""

    bench: str
    algo: str  # "mpi", or a variant: a datatype, a device buffer, a ReFrame variable
    size: int
    unit: str  # "s" or "B/s"
    value: float
    line: int  # of the file, from 1
    low: float | None = None  # the tool's own minimum and maximum (over ranks), when printed
    high: float | None = None
    reps: int | None = None  # the repetitions behind the value, when printed
    printed: dict = field(default_factory=dict)  # every column of the line, as printed

    @property
    def key(self) -> tuple:
        return (self.bench, self.algo, self.size)

    def to_dict(self) -> dict:
        return {
            "bench": self.bench,
            "algo": self.algo,
            "size": self.size,
            "unit": self.unit,
            "value": self.value,
            "min": self.low,
            "max": self.high,
            "reps": self.reps,
            "line": self.line,
            "printed": dict(self.printed),
        }


@dataclass
class Log:
    """One run's worth of a file: all of an OSU or ReFrame line's numbers, or
    an IMB file's numbers at one process count."""

    tool: str  # osu, imb, reframe
    path: str
    part: str = ""  # which part of the file ("np 4", "line 12"); "" the whole
    version: str | None = None
    when: datetime | None = None  # from the log itself, else from --date
    date_from: str = "log"  # log, or how --date gave it: a date, mtime, name
    np: int | None = None
    nodes: int | None = None
    machine: str | None = None
    method: str = ""  # what else makes numbers compare (ReFrame: the environment)
    facts: dict = field(default_factory=dict)  # kernel, architecture, test result, ...
    values: list = field(default_factory=list)
    notes: list = field(default_factory=list)  # what was left out, and why

    def add(self, value: Value, keys: dict) -> None:
        """`value`, refused when the file printed its benchmark and size already."""
        if value.key in keys:
            fail(
                self.path,
                value.line,
                f"{value.bench} at {value.size} B was printed already on "
                f"line {keys[value.key]}: give each run's output as a file of its own",
            )
        keys[value.key] = value.line
        self.values.append(value)


def fail(path, line, problem) -> None:
    raise UsageError(f"{path} line {line}: {problem}")


# Units the tools print, as factors to seconds or to bytes per second.
TIME_UNITS = {
    "s": 1.0,
    "sec": 1.0,
    "ms": 1e-3,
    "msec": 1e-3,
    "us": 1e-6,
    "usec": 1e-6,
    "µs": 1e-6,
    "ns": 1e-9,
    "nsec": 1e-9,
}
RATE_UNITS = {
    "b/s": 1.0,
    "kb/s": 1e3,
    "mb/s": 1e6,
    "gb/s": 1e9,
    "kib/s": 2.0**10,
    "mib/s": 2.0**20,
    "gib/s": 2.0**30,
    "mbytes/sec": 1e6,
    "mbytes/s": 1e6,
}


def unit_of(text) -> tuple[str, float] | None:
    """("s" or "B/s", factor) of a unit as printed ("us", "MB/s", ...); None
    for anything else (a message rate, a percentage, flops)."""
    word = str(text).strip()
    if word in TIME_UNITS:
        return "s", TIME_UNITS[word]
    if word.lower() in RATE_UNITS:
        return "B/s", RATE_UNITS[word.lower()]
    return None


def number(path, line, text, what) -> float:
    """A finite number as printed, else the line is refused."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        fail(
            path,
            line,
            f"{what} '{text}' is not a number: the line is damaged (cut short, or another program's output mixed in)",
        )
    return value


def whole(path, line, text, what) -> int:
    if not re.fullmatch(r"\d{1,15}", str(text)):
        fail(
            path,
            line,
            f"{what} '{text}' is not a whole number: the line is damaged (cut "
            "short, or another program's output mixed in)",
        )
    return int(text)


def slug(text) -> str:
    """A name as lowercase words joined by '_': 'Bi-Directional Bandwidth' → 'bi_directional_bandwidth'."""
    return re.sub(r"[^a-z0-9]+", "_", str(text).lower()).strip("_")
