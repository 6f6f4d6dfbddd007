# SPDX-License-Identifier: BSD-3-Clause
"""The text the Intel MPI Benchmarks 2019–2021 print (src_c/IMB_g_info.c,
IMB_output.c): a banner ("# Intel(R) MPI Benchmarks <version>, MPI-1 part",
"# Date : <asctime>", "# Release : <kernel>", …), then per benchmark and
process count "# Benchmarking <Name>", "# #processes = <N>", a column header
and one line per size; the columns differ by benchmark (t[usec], t_min/t_max/
t_avg, Mbytes/sec, Msg/sec; Barrier has no size), and a size IMB gave up on
prints its reason (out-of-mem., int-overflow, time-out.).

Kept: t_avg for collectives, t for the ping-pongs, t_ovrl for the non-blocking
benchmarks, the bandwidth for Uniband and Biband (t_min, t_max beside); one Log per process count."""

from __future__ import annotations

import re
from datetime import datetime

from mpiscope.imports.log import Log, Value, fail, number, unit_of, whole

BANNER = re.compile(r"^#\s+Intel\s?\(R\) MPI Benchmarks (?P<version>.+?), (?P<part>.+?) part")
FIELD = re.compile(r"^#\s*(?P<key>Date|Machine|Release|MPI Version)\s*:\s*(?P<value>.*?)\s*$")
BENCHMARK = re.compile(r"^#\s*Benchmarking (?P<multi>Multi-)?(?P<name>[A-Za-z]\S*)")
PROCESSES = re.compile(r"^#\s*#processes\s*=\s*(?P<np>\d+)")
MODE = re.compile(r"^#\s*MODE:\s*(?P<mode>\S+)")
GAVE_UP = ("out-of-mem.", "int-overflow", "time-out.")
# The printed column kept, in this order of preference.
KEPT = ("t_avg[usec]", "t[usec]", "t_ovrl[usec]", "t_pure[usec]", "Mbytes/sec")
UNIT = re.compile(r"\[([^\]]+)\]$")


def parse(path, text) -> list[Log]:
    """One Log per process count, in the file's order."""
    path = str(path)
    logs, keys = {}, {}
    facts, version, when = {}, None, None
    bench = np = mode = columns = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        if version is None:
            banner = BANNER.match(line)
            if banner:
                version, facts["part"] = banner["version"].strip(), banner["part"].strip()
            continue  # before the banner: a launcher's or a job's own lines
        words = line.split()
        if words[0] in ("#bytes", "#repetitions"):
            if bench is None or np is None:
                fail(
                    path,
                    n,
                    "a column header before '# Benchmarking …' and '# #processes = …': the file is cut or damaged",
                )
            columns = words
            continue
        if line.startswith("#"):
            if m := FIELD.match(line):
                if m["key"] == "Date":
                    when = _date(path, n, m["value"])
                else:
                    facts[m["key"].lower().replace(" ", "_")] = m["value"]
            elif m := BENCHMARK.match(line):
                if m["multi"]:
                    fail(
                        path,
                        n,
                        "a -multi run (several groups at once) is not imported: import "
                        "the output of a run without -multi",
                    )
                bench, np, mode, columns = m["name"].lower(), None, None, None
            elif m := PROCESSES.match(line):
                np, columns = int(m["np"]), None
            elif m := MODE.match(line):
                mode = m["mode"].lower()
            continue
        if columns is None:
            fail(
                path,
                n,
                f"'{line[:60]}' is not IMB's: a result line outside a table (the "
                "file is damaged, or another program's output is mixed in)",
            )
        log = logs.setdefault(np, Log("imb", path, f"np {np}", version=version, when=when, np=np))
        _row(log, keys.setdefault(np, {}), bench, mode or "mpi", columns, words, n)
    if version is None:
        from mpiscope.common.errors import UsageError

        raise UsageError(
            f"{path}: not an Intel MPI Benchmarks output (no '#    Intel(R) MPI "
            "Benchmarks …' banner); `mpiscope import osu` reads OSU's, "
            "`mpiscope import reframe` ReFrame's performance logs"
        )
    found = [log for log in logs.values() if log.values]
    if not found:
        fail(
            path, n, "the IMB output holds no result line: it ended before its first table (see its job's error output)"
        )
    for log in found:
        log.facts = {**facts, **({"kernel": facts["release"]} if "release" in facts else {})}
    return found


def _date(path, n, text):
    try:
        return datetime.strptime(" ".join(text.split()), "%a %b %d %H:%M:%S %Y")
    except ValueError:
        fail(path, n, f"the date '{text}' is not as IMB prints it (e.g. Thu Mar  7 02:00:01 2024)")


def _row(log, keys, bench, algo, columns, words, n):
    if len(words) >= 2 and any(words[1].startswith(g) for g in GAVE_UP):
        log.notes.append(f"line {n}: {bench} at {words[0]} B: IMB printed {words[1].rstrip(';')}: left out")
        return
    if len(words) != len(columns):
        fail(
            log.path,
            n,
            f"{len(words)} fields where the header names {len(columns)} "
            f"({' '.join(columns)}): the line is cut short or damaged",
        )
    printed = dict(zip(columns, words))
    size = whole(log.path, n, printed["#bytes"], "#bytes") if "#bytes" in printed else 0
    reps = whole(log.path, n, printed["#repetitions"], "#repetitions")
    kept = next((c for c in KEPT if c in printed), None)
    if kept is None:
        fail(log.path, n, f"no time or bandwidth column among {' '.join(columns)}")
    unit, factor = _unit(kept)
    value = number(log.path, n, printed[kept], kept) * factor
    low = number(log.path, n, printed["t_min[usec]"], "t_min") * 1e-6 if "t_min[usec]" in printed else None
    high = number(log.path, n, printed["t_max[usec]"], "t_max") * 1e-6 if "t_max[usec]" in printed else None
    for column, text in printed.items():
        if column not in ("#bytes", "#repetitions"):
            number(log.path, n, text, column)
    if value <= 0:
        log.notes.append(f"line {n}: {bench} at {size} B printed {kept} as {printed[kept]}: left out")
        return
    log.add(Value(bench, algo, size, unit, value, n, low, high, reps, printed), keys)


def _unit(column):
    if column == "Mbytes/sec":
        return unit_of(column)
    return unit_of(UNIT.search(column).group(1))
