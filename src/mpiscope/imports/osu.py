# SPDX-License-Identifier: BSD-3-Clause
"""The text the OSU Micro-Benchmarks 5.x–7.x print (c/util/osu_util.c,
c/util/osu_util_mpi.c; 5.x util/osu_util*.c): "# OSU MPI[-CUDA|-ROCM|-OPENACC]
<Name> Test v<version>", the program's comment lines ("# Datatype: MPI_CHAR.",
…), a column header whose columns are two spaces or more apart ("# Size",
"Latency (us)", "Bandwidth (MB/s)", …; with -f also min, max and iterations;
barrier has no size) and one line per size. A file may hold several programs'
outputs, and 7.x one table per datatype (-T).
osu_latency, osu_bw and osu_bibw make a run of 2 ranks, the others of --np.
The number kept is the first column after the size, with -f's minimum,
maximum and iterations beside it."""

from __future__ import annotations

import re

from mpiscope.imports.log import Log, Value, fail, number, slug, unit_of, whole

TITLE = re.compile(
    r"^#\s*OSU MPI(?P<accel>-[A-Z]+(?: MANAGED)?)? (?P<name>.+?) Test"
    r"(?: v(?P<version>\S+))?\s*$"
)
DATATYPE = re.compile(r"^#\s*Datatype:\s*(?P<type>\S+?)\.?\s*$")
UNIT = re.compile(r"\(([^()]+)\)\s*$")
# OSU's programs by title, named as mpiscope names the same operation.
NAMES = {
    "Latency": "pingpong",
    "Bandwidth": "bw",
    "Bi-Directional Bandwidth": "bibw",
    "Barrier Latency": "barrier",
    "Broadcast Latency": "bcast",
    "Reduce Latency": "reduce",
    "Allreduce Latency": "allreduce",
    "Allgather Latency": "allgather",
    "Gather Latency": "gather",
    "Scatter Latency": "scatter",
    "All-to-All Personalized Exchange Latency": "alltoall",
    "Reduce_scatter_block Latency": "reduce_scatter_block",
}
TWO_RANKS = ("pingpong", "bw", "bibw")  # programs that run on exactly two ranks
DEFAULT_DATATYPE = "MPI_CHAR"


def parse(path, text) -> list[Log]:
    """The file's one Log; UsageError naming the line when it is not OSU's
    output or is damaged."""
    logs = {True: Log("osu", str(path), np=2), False: Log("osu", str(path))}  # by TWO_RANKS
    keys = {}
    program = None  # the current program: (bench, variant)
    comments = []  # comment lines since the last table line: (line, text)
    columns = None  # the current table's column names
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        title = TITLE.match(line)
        if title:
            program, columns, comments = _program(logs, title, n), None, []
            log = logs[program[0] in TWO_RANKS]
        elif line.startswith("#"):
            if program is None:
                continue  # before the first title: a launcher's or a job's own lines
            comments.append((n, line))
            columns = None
        elif program is None:
            continue
        else:
            if columns is None:
                columns = _columns(log.path, comments, n)
                variant = _variant(program[1], comments)
            _row(log, keys, program[0], variant, columns, line, n)
            comments = []
    if program is None:
        raise_foreign(path)
    found = [log for log in logs.values() if log.values]
    if not found:
        fail(
            path,
            n,
            "the OSU output holds no result line: the program ended before its first size (see its job's error output)",
        )
    if len(found) == 2:  # two ranks, and as many as --np says: a run each
        found[0].part, found[1].part = "np 2", "the other programs"
    for log in found:
        log.version = logs[True].version or logs[False].version
    return found


def raise_foreign(path):
    from mpiscope.common.errors import UsageError

    raise UsageError(
        f"{path}: not an OSU Micro-Benchmarks output (no '# OSU MPI … Test' line); "
        "`mpiscope import imb` reads IMB's, `mpiscope import reframe` ReFrame's "
        "performance logs"
    )


def _program(logs, title, n):
    version, before = title["version"], logs[True].version or logs[False].version
    if before not in (None, version):
        fail(logs[True].path, n, f"OSU {version} after OSU {before}: give each version's output as a file of its own")
    logs[True].version = logs[False].version = version
    name = title["name"].strip()
    accel = (title["accel"] or "").strip("-").lower().replace(" ", "_")
    return NAMES.get(name) or slug(name), accel


def _variant(accel, comments) -> str:
    datatype = next((m["type"] for _, c in comments if (m := DATATYPE.match(c))), None)
    parts = [accel] if accel else []
    if datatype and datatype != DEFAULT_DATATYPE:
        parts.append(datatype)
    return "+".join(parts) or "mpi"


def _columns(path, comments, n) -> list[str]:
    """The column names of the header: the last comment line before the table."""
    if not comments:
        fail(path, n, "a result line without the column header before it: the file is cut or damaged")
    line_no, header = comments[-1]
    names = [c.strip() for c in re.split(r"\s{2,}", header.lstrip("#").strip()) if c.strip()]
    if not names or (names[0] != "Size" and _unit(names[0]) is None):
        fail(
            path,
            line_no,
            f"'{header[:60]}' is not an OSU column header (# Size, then the "
            "latency or bandwidth column): the file is damaged",
        )
    return names


def _unit(column):
    m = UNIT.search(column)
    return unit_of(m.group(1) if m else column)


def _row(log, keys, bench, variant, columns, line, n):
    words = line.split()
    if len(words) != len(columns):
        fail(
            log.path,
            n,
            f"{len(words)} fields where the header names {len(columns)} "
            f"({', '.join(columns)}): the line is cut short or damaged",
        )
    printed = dict(zip(columns, words))
    size = whole(log.path, n, words[0], "the size") if columns[0] == "Size" else 0
    first = 1 if columns[0] == "Size" else 0
    unit, factor = _unit(columns[first]) or (None, None)
    if unit is None:
        fail(log.path, n, f"the column '{columns[first]}' is neither a time nor a bandwidth")
    value = number(log.path, n, words[first], columns[first]) * factor
    if value <= 0:
        log.notes.append(f"line {n}: {bench} at {size} B printed as {words[first]}: left out")
        return
    low = _optional(log.path, n, printed, "Min Latency(us)", factor)
    high = _optional(log.path, n, printed, "Max Latency(us)", factor)
    reps = whole(log.path, n, printed["Iterations"], "Iterations") if "Iterations" in printed else None
    log.add(Value(bench, variant, size, unit, value, n, low, high, reps, printed), keys)


def _optional(path, n, printed, column, factor):
    return number(path, n, printed[column], column) * factor if column in printed else None
