# SPDX-License-Identifier: BSD-3-Clause
"""How the catalog tells which run directories changed: a stamp per
directory of its context.json and quality.json (size, modification time,
inode). Standard library only: `mpiscope runs` compares stamps before it
imports anything heavier."""

from __future__ import annotations

import os
import stat
import time

from mpiscope.store.layout import CONTEXT_FILE, QUALITY_FILE


def stamps(out_root) -> list[tuple[str, str]]:
    """(OUT/<dir>/context.json, stamp) of every visible run directory, by
    directory name; the stamp changes when context.json or quality.json does."""
    try:
        entries = os.scandir(out_root)
    except (FileNotFoundError, NotADirectoryError):
        return []
    with entries:
        names = sorted(e.name for e in entries if not e.name.startswith(".") and e.is_dir())
    found, root, now = [], os.path.join(out_root, ""), time.time()
    for name in names:
        cj = f"{root}{name}/{CONTEXT_FILE}"
        try:
            st = os.stat(cj)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            try:
                quality = _stat_text(os.stat(f"{root}{name}/{QUALITY_FILE}"), now)
            except OSError:
                quality = "-"
            found.append((cj, f"{name}|{_stat_text(st, now)}|{quality}"))
    return found


RACY_S = 2.0  # a file changed this recently may change again within its clock tick


def _stat_text(st: os.stat_result, now: float) -> str:
    """Size, modification time and inode of a file; a stamp no later stamp
    equals when the file changed less than RACY_S before `now` (a rewrite of
    the same size within the file system's clock tick would keep its time),
    so the run is read again at the next refresh."""
    if now - st.st_mtime < RACY_S:
        return f"new{time.time_ns()}"
    return f"{st.st_size}.{st.st_mtime_ns}.{st.st_ino}"
