# SPDX-License-Identifier: BSD-3-Clause
"""Intel MPI's I_MPI_ADJUST_<OP> settings: a writer and our own reader.

The value is `<preset>[:<conditions>][;<preset>:<conditions>…]`, a condition
`<l>-<m>` (message bytes l..m) or `<l>-<m>@<p>-<q>` (and p..q processes). Intel
MPI 2021 reads it as established under gdb (calls.py), and so does
our reader: a call takes the first segment whose upper bound is at or above its
size, else the last (lower bounds are not compared); once a condition names
process counts, sizes are no longer compared, so one variable cannot hold rules
for several communicator sizes (tuning.py does); a number beyond 2147483647
voids the variable; a set variable replaces the library's choice everywhere."""

from __future__ import annotations

import re

from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.algorithm_catalog import COLLECTIVES, DEFAULT, Catalog
from mpiscope.mpilibs.intelmpi.presets import preset_name, variable
from mpiscope.mpilibs.selection import check

INT_MAX = 2147483647  # the largest number Intel MPI reads in a condition
LINE_RE = re.compile(r'^(I_MPI_ADJUST_\w+)="([^"]*)"$')
CONDITION_RE = re.compile(r"^(\d+)(?:-(\d+))?(?:@(\d+)(?:-(\d+))?)?$")


def segments(coll: str, rules: list, catalog: Catalog) -> list:
    """[(preset number, first size, last size)] of one communicator size's
    rules: each up to the next rule's start, the last to INT_MAX."""
    out = []
    for r, nxt in zip(rules, rules[1:] + [None]):
        if r.algorithm == DEFAULT:
            raise UsageError(
                f"{coll}: a rule keeps Intel MPI's own choice beside rules naming "
                f"presets; the library cannot keep it there (name the preset)"
            )
        out.append((int(catalog.find(coll, r.algorithm).value), r.start, nxt.start - 1 if nxt else INT_MAX))
    return out


def named(rules_by_p: dict) -> bool:
    """Whether any rule of a collective names a preset (otherwise it is left out)."""
    return any(r.algorithm != DEFAULT for rules in rules_by_p.values() for r in rules)


def values(table: dict, catalog: Catalog) -> dict:
    """{variable: value} for `table` {collective: {p: [Rule]}} of one
    communicator size; a collective whose rules all keep the default has none."""
    out = {}
    for coll, by_p in table.items():
        if not named(by_p):
            continue
        if len(by_p) != 1:
            raise UsageError(
                f"{coll}: I_MPI_ADJUST_{coll.upper()} holds the rules of one "
                f"communicator size only (Intel MPI ignores message sizes beside "
                f"process counts); several are written as a tuning file"
            )
        ((p, rules),) = by_p.items()
        out[variable(coll)] = ";".join(
            f"{k}:{lo}-{hi}" for k, lo, hi in segments(coll, check(rules, f"{coll} p={p}"), catalog)
        )
    return out


def write(table: dict, catalog: Catalog) -> str:
    """The settings as a file of `VARIABLE="value"` lines (a shell reads it with `set -a; . FILE`)."""
    lines = [f"# Intel MPI {catalog.version} collective presets written by mpiscope tune"]
    lines += [f'{k}="{v}"' for k, v in values(table, catalog).items()]
    return "\n".join(lines) + "\n"


def _number(text: str, where: str) -> int:
    n = int(text)
    if n > INT_MAX:
        raise UsageError(f"{where}: {n} is beyond {INT_MAX}: Intel MPI would ignore the whole variable")
    return n


def read_value(coll: str, value: str, catalog: Catalog | None = None, where: str = "") -> list:
    """[(preset number, upper size bound or None)] of one variable's value,
    checked as Intel MPI reads it (module docstring)."""
    where = where or variable(coll)
    highest = None if catalog is None else max((int(a.value) for a in catalog.algorithms.get(coll, [])), default=0)
    out: list[tuple[int, int | None]] = []
    for seg in value.split(";"):
        preset, _, conditions = seg.strip().partition(":")
        if not preset.isdigit():
            raise UsageError(f"{where}: '{seg}' does not start with a preset number")
        k = _number(preset, where)
        if highest is not None and k > highest:
            raise UsageError(
                f"{where}: Intel MPI {catalog.version} has no {coll} preset {k} (its presets are 0-{highest})"
            )
        if not conditions:
            out.append((k, None))
            continue
        for cond in conditions.split(","):
            m = CONDITION_RE.match(cond.strip())
            if m is None:
                raise UsageError(f"{where}: '{cond}' is not a condition <l>-<m>[@<p>-<q>]")
            if m.group(3) is not None:
                raise UsageError(
                    f"{where}: '{cond}' names process counts: Intel MPI then "
                    f"compares no message size (write a tuning file instead)"
                )
            lo = _number(m.group(1), where)
            hi = _number(m.group(2), where) if m.group(2) else lo
            if hi < lo or (out and out[-1][1] is not None and hi <= out[-1][1]):
                raise UsageError(
                    f"{where}: '{cond}' does not rise above the condition before it; "
                    f"Intel MPI takes the first whose upper bound holds"
                )
            out.append((k, hi))
    return out


def read(text: str, catalog: Catalog | None = None, path: str = "settings") -> dict:
    """{collective: read_value's list} of a file `write` wrote."""
    out = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        m = LINE_RE.match(line.strip())
        coll = next((c for c in COLLECTIVES if m and m.group(1) == variable(c)), None)
        if coll is None:
            raise UsageError(f'{path}:{lineno}: not a line I_MPI_ADJUST_<OP>="VALUE" of a collective mpiscope tunes')
        out[coll] = read_value(coll, m.group(2), catalog, f"{path}:{lineno}")
    return out


def selects(parsed: dict, coll: str, p: int, size: int) -> str:
    """The preset (its name) Intel MPI takes for a call of `size` on any
    number of ranks p, or DEFAULT where the collective has no variable."""
    segs = parsed.get(coll)
    if not segs:
        return DEFAULT
    k = next((k for k, hi in segs if hi is None or size <= hi), segs[-1][0])
    return preset_name(k)
