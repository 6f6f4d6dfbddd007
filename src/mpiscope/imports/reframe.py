# SPDX-License-Identifier: BSD-3-Clause
"""ReFrame 4's performance logs (the `filelog` handler of `handlers_perflog`,
reframe/core/logging.py): a header line naming the fields, then one line per
run of the test, fields split by the delimiter ('|' by default), each
performance variable X expanded into X_value, X_unit, X_ref, X_lower_thres,
X_upper_thres as the site's format has them.

Each line is a run: dated by job_completion_time (or _unix), its benchmark the
test's name, its variant the performance variable, its size message_size (0
without one), its machine system:partition, its ranks num_tasks. Units that
are neither a time nor a bandwidth (Gflop/s, %, …) are left out, with a note."""

from __future__ import annotations

import math
from datetime import datetime

from mpiscope.imports.log import Log, Value, fail, number, unit_of

DELIMITERS = ("|", ",", ";", "\t")
NAME_FIELDS = ("name", "display_name", "unique_name", "short_name", "check_name", "info")


def parse(path, text) -> list[Log]:
    path = str(path)
    logs, header, delimiter = [], None, None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip("\r\n")
        if not line.strip():
            continue
        found = _header(line)
        if found:
            delimiter, header = found
            continue
        if header is None:
            from mpiscope.common.errors import UsageError

            raise UsageError(
                f"{path} line {n}: not a ReFrame performance log: its first line is "
                "not the header ReFrame 4 writes (fields such as result|"
                "job_completion_time|…|X_value|X_unit|…); `mpiscope import osu` and "
                "`mpiscope import imb` read the benchmarks' own outputs"
            )
        fields = line.split(delimiter)
        if len(fields) != len(header):
            fail(
                path, n, f"{len(fields)} fields where the header names {len(header)}: the line is cut short or damaged"
            )
        logs.append(_run(path, n, dict(zip(header, fields)), header))
    if not logs:
        fail(
            path,
            max(1, len(text.splitlines())),
            "the performance log holds no run: only its header" if header else "the file holds no line",
        )
    return logs


def _header(line):
    """(delimiter, field names) when `line` is a header: it names X_value and X_unit."""
    for delimiter in DELIMITERS:
        names = [f.strip() for f in line.split(delimiter)]
        if any(f.endswith("_value") and f[:-6] + "_unit" in names for f in names) and not any(
            _is_number(f) for f in names
        ):
            return delimiter, names
    return None


def _is_number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def _run(path, n, row, header) -> Log:
    name = next((row[f] for f in NAME_FIELDS if row.get(f, "").strip()), None)
    if name is None:
        fail(path, n, f"the header names no test ({', '.join(NAME_FIELDS)})")
    log = Log("reframe", path, f"line {n}", when=_when(path, n, row))
    log.np = _count(row.get("num_tasks"))
    per_node = _count(row.get("num_tasks_per_node"))
    log.nodes = log.np // per_node if log.np and per_node and log.np % per_node == 0 else None
    system, partition = row.get("system", "").strip(), row.get("partition", "").strip()
    log.machine = f"{system}:{partition}" if system and partition else system or None
    environ = row.get("environ", "").strip()
    log.method = f"environ {environ}" if environ else ""
    log.facts = {k: row[k] for k in ("result", "jobid", "job_nodelist") if row.get(k, "").strip()}
    size = _count(row.get("message_size")) or 0
    keys = {}
    for var in [f[:-6] for f in header if f.endswith("_value") and f[:-6] + "_unit" in row]:
        text, unit_text = row[f"{var}_value"].strip(), row[f"{var}_unit"].strip()
        if text in ("", "None", "null", "nan"):
            log.notes.append(f"line {n}: {name} {var}: no value logged: left out")
            continue
        unit = unit_of(unit_text)
        if unit is None:
            log.notes.append(
                f"line {n}: {name} {var} in {unit_text or 'no unit'} is neither a time nor a bandwidth: left out"
            )
            continue
        value = number(path, n, text, f"{var}_value") * unit[1]
        if value <= 0:
            log.notes.append(f"line {n}: {name} {var} logged as {text}: left out")
            continue
        printed = {k: row[k] for k in row if k == f"{var}_value" or k.startswith(f"{var}_")}
        log.add(Value(name.strip(), var, size, unit[0], value, n, printed=printed), keys)
    return log


def _when(path, n, row):
    text = row.get("job_completion_time", "").strip()
    if text and text not in ("None", "null"):
        try:
            return datetime.fromisoformat(text).replace(tzinfo=None)
        except ValueError:
            pass
    unix = row.get("job_completion_time_unix", "").strip()
    if unix and _is_number(unix) and math.isfinite(float(unix)):
        return datetime.fromtimestamp(float(unix))
    if text and text not in ("None", "null"):
        fail(path, n, f"job_completion_time '{text}' is not a date (YYYY-MM-DDTHH:MM:SS)")
    return None


def _count(text):
    text = str(text or "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else None
