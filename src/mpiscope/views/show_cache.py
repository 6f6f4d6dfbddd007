# SPDX-License-Identifier: BSD-3-Clause
"""What `mpiscope show` prints of a run, kept in RUN/show.json: a show reads one
small JSON file instead of the samples (no pyarrow, numpy or statistics).

It holds the run context, show's rows, the quality summary, the table and the
warnings, with the stamps of the files they came from (samples.parquet,
quality.json, context.json, the installed mpiscope's __init__.py). Written when
the run is stored and whenever show computes the rows, unless a file changed
within RACY_S. Anything in doubt (a stamp that differs, not a regular file, not
this module's JSON, a wrong type) is computed again; VERSION goes up whenever
what show computes changes."""

from __future__ import annotations

import os
import stat
import time
from collections import namedtuple

from mpiscope.common.cache_files import code_stamp, read_json, write_json
from mpiscope.store.layout import CONTEXT_FILE, QUALITY_FILE
from mpiscope.views.show_text import STAT_KEYS

CACHE_FILE = "show.json"
FORMAT = "mpiscope-show-rows"
VERSION = 1
SAMPLES_FILE = "samples.parquet"  # as store/ingest.py names it (not imported: it imports pyarrow)
SOURCES = (SAMPLES_FILE, QUALITY_FILE, CONTEXT_FILE)
RACY_S = 2.0  # a file changed this recently may change again within its file system's clock tick

NUMBER = (int, float)
# Every key of a row, with the types its value may have (None: JSON null).
ROW_TYPES = {
    "bench": (str,),
    "algo": (str, type(None)),
    "size": (int,),
    "unit": (str,),
    "n": (int,),
    "invalid": (int,),
    **{k: (*NUMBER, type(None)) for k in STAT_KEYS},
    "ci_level": NUMBER,
    "median_timer_removed": (*NUMBER, type(None)),
    "timer_interval_s": (*NUMBER, type(None)),
    "stop": (str, type(None)),
    "launches": (int,),
    "quality": (dict,),
}


# What show prints of a run: its id and context, its rows, the quality summary
# (views.show.quality_summary), the table (show_text.format_show) and the warnings.
Shown = namedtuple("Shown", "run_id context rows summary text notes")


def shown(run_dir) -> Shown:
    """The kept rows when they are current, else computed now and kept."""
    return cached(run_dir) or computed(run_dir, cache=True)


def computed(run_dir, cache=False) -> Shown:
    """What show prints, computed from the samples; with `cache`, kept as well."""
    from mpiscope.store.series import open_run
    from mpiscope.views.show import show_rows

    before = _stamps(run_dir)
    rows = show_rows(run_dir)
    result = _shown(open_run(run_dir), rows)
    if cache and before is not None and not _racy(before):
        _write(run_dir, result, before)
    return result


def keep(run_dir, rows) -> None:
    """Keeps the rows a run computed from memory as it stored its files, with
    the run context as show reads it from samples.parquet."""
    from mpiscope.common.errors import UsageError
    from mpiscope.store.series import open_run

    try:
        run = open_run(run_dir)
    except UsageError:  # samples.parquet unreadable: show says so, from the samples
        return
    _write(run_dir, _shown(run, rows), _stamps(run_dir))  # the caller wrote these files


def _shown(run, rows) -> Shown:
    from mpiscope.views.show import quality_summary
    from mpiscope.views.show_text import format_show, run_notes

    summary = quality_summary(rows, run)
    notes = run_notes(run) + summary["warnings"]
    return Shown(run.run_id, run.context, rows, summary, format_show(rows, run), notes)


def _write(run_dir, result: Shown, stamps) -> None:
    """Keeps `result` in RUN/show.json with the `stamps` of the files it was
    computed from; not for a run whose id is its directory's name (the
    directory may be renamed without changing a stamp)."""
    from mpiscope.common.jsonable import plain

    if stamps is None or not result.context.get("run_id"):
        return
    doc = {"format": FORMAT, "version": VERSION, "sources": stamps, **plain(result._asdict())}
    write_json(os.path.join(run_dir, CACHE_FILE), doc)


def cached(run_dir) -> Shown | None:
    """The kept rows, or None when there are none this module trusts."""
    doc = read_json(os.path.join(run_dir, CACHE_FILE))
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or doc.get("version") != VERSION:
        return None
    stamps = _stamps(run_dir)
    if stamps is None or doc.get("sources") != stamps:
        return None
    if set(doc) != {"format", "version", "sources", *Shown._fields}:
        return None
    result = Shown(**{k: doc[k] for k in Shown._fields})
    context, rows = result.context, result.rows
    if not (isinstance(context, dict) and context.get("run_id") and result.run_id == str(context["run_id"])):
        return None
    if not (isinstance(result.text, str) and _strings(result.notes) and _summary_ok(result.summary)):
        return None
    if not (isinstance(rows, list) and all(_row_ok(r) for r in rows)):
        return None
    return result


def _stamps(run_dir) -> dict | None:
    """{file: [size, mtime ns, ctime ns, inode]} of the files the rows come
    from (None for one that is missing) and the code_stamp of mpiscope;
    None when one of them is not a regular file."""
    out = {"mpiscope": code_stamp()}
    for name in SOURCES:
        try:
            st = os.stat(os.path.join(run_dir, name))
        except FileNotFoundError:
            out[name] = None
            continue
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        out[name] = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    return out


def _racy(stamps) -> bool:
    """Whether a run file changed so recently that it could change again with
    the same stamp (within one tick of its file system's clock)."""
    now = time.time_ns()
    return any(s is not None and now - s[2] < RACY_S * 1e9 for k, s in stamps.items() if k != "mpiscope")


def _strings(value) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _summary_ok(summary) -> bool:
    return (
        isinstance(summary, dict)
        and set(summary) == {"headline", "warnings", "thresholds"}
        and isinstance(summary["headline"], str)
        and _strings(summary["warnings"])
        and isinstance(summary["thresholds"], dict)
    )


def _row_ok(row) -> bool:
    if not isinstance(row, dict) or set(row) != set(ROW_TYPES):
        return False
    for key, types in ROW_TYPES.items():
        value = row[key]
        if isinstance(value, bool) or not isinstance(value, types):
            return False
    return _strings(row["quality"].get("flags"))
