# SPDX-License-Identifier: BSD-3-Clause
"""Small JSON files that spare a command its heavy libraries (the runs
listing beside the catalog, the rows `mpiscope show` prints): read only when
they are regular files of sane size holding JSON with finite numbers, written
whole or not at all and never in place of anything but a regular file. A
cache that cannot be read or written is no error: the caller computes afresh."""

from __future__ import annotations

import os
import stat

LIMIT = 64 * 2**20  # bytes; a larger file is not read


def read_json(path):
    """The JSON in `path`, or None when it is missing, not a regular file (a
    FIFO is never waited on), larger than LIMIT, or not JSON with finite
    numbers."""
    import json  # here: a listing of an empty root reads none

    from mpiscope.common.inputs import InputError, read_bytes

    try:
        data = read_bytes(path, LIMIT)
        return json.loads(data, parse_float=_finite, parse_constant=_refuse)
    except (InputError, ValueError, RecursionError):
        return None


def write_json(path, doc) -> None:
    """`doc` as compact JSON into `path`, atomically, unless something other
    than a regular file holds the name; a failed write is let be."""
    import json

    from mpiscope.common.atomic import write_text
    from mpiscope.common.errors import UsageError

    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return
    except FileNotFoundError:
        pass
    except OSError:
        return
    try:
        write_text(path, json.dumps(doc, separators=(",", ":")))
    except (OSError, UsageError):  # a read-only directory, a full disk (OutputError)
        return


def code_stamp() -> list:
    """Where the running mpiscope is installed and its __init__.py's size,
    modification time and inode: an installation or upgrade changes it, so
    caches written by another mpiscope are not trusted."""
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "__init__.py")
    try:
        st = os.stat(path)
    except OSError:
        return [path]
    return [path, st.st_size, st.st_mtime_ns, st.st_ino]


def _finite(text) -> float:
    """A JSON number; infinities (1e999) are refused: no cache holds them."""
    value = float(text)
    if value - value != 0:
        raise ValueError(f"{text} is not finite")
    return value


def _refuse(text):
    raise ValueError(f"{text} is not JSON a cache holds")
