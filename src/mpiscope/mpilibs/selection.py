# SPDX-License-Identifier: BSD-3-Clause
"""A selection table and the files it is written as.

The table: per collective and communicator size, a list of rules (first
library size, algorithm), the first starting at 0 (Open MPI ignores a whole
file whose first rule does not), sizes rising. DEFAULT keeps the library's
own choice. A library writes it as one or more files (SelectionFile), each
with our own reader's answer for every cell, which the writer checks before
the file is kept (tune/write.py)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from mpiscope.common.errors import UsageError


@dataclass(frozen=True)
class Rule:
    start: int  # library size, inclusive; the rule holds up to the next rule's start
    algorithm: str  # algorithm name, or DEFAULT


def check(rules: list, where: str = "") -> list:
    """Raises UsageError unless the rules start at 0 and rise strictly."""
    if not rules:
        raise UsageError(f"{where}: no rules")
    if rules[0].start != 0:
        raise UsageError(
            f"{where}: the first message-size rule starts at {rules[0].start}, not 0 "
            f"(Open MPI ignores the whole file then)"
        )
    for a, b in zip(rules, rules[1:]):
        if b.start <= a.start:
            raise UsageError(f"{where}: message sizes do not rise ({a.start} then {b.start})")
    return rules


def chosen(rules: list, size: int) -> str:
    """The algorithm the rules select at library size `size` (the last rule starting at or below)."""
    pick = rules[0].algorithm
    for r in rules:
        if r.start <= size:
            pick = r.algorithm
    return pick


@dataclass(frozen=True)
class SelectionFile:
    """One file a library reads its selection from, as written, with our
    reader's view of it: `selects(coll, p, library size)` is what the reader
    finds for a call; `means(coll, algorithm or DEFAULT)` what it must find
    where the table names that algorithm (None: anything, the library's own)."""

    key: str  # its name in tune.json's "files"
    filename: str
    text: str
    reader: str  # "our reader", for messages
    selects: Callable
    means: Callable
