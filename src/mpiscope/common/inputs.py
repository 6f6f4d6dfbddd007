# SPDX-License-Identifier: BSD-3-Clause
"""Read every input file one way, so none can hang a command, exhaust its
memory or end in a traceback.

A file is looked at with os.stat before it is opened (opening a FIFO blocks
until a writer comes): only a regular file is read. It is read up to a limit
fitted to its kind, decoded as UTF-8, and a JSON or TOML document is refused
when nested deeper than MAX_DEPTH (found by a scan of its brackets, so the
parser never recurses that deep). Every failure is an InputError (a
UsageError: exit 2) that names the file, says what is wrong with it and what
to do.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat

from mpiscope.common.errors import UsageError
from mpiscope.common.oserrors import describe

KIB = 1024
MIB = 1024 * KIB

# Size limits per kind of file: far above any real one, far below memory.
HOSTFILE_LIMIT = 16 * MIB  # a hostfile or a pairs file: one host (pair) a line
CONFIG_LIMIT = 1 * MIB  # a config file (TOML)
MODEL_LIMIT = 16 * MIB  # a machine model, an application's weights
DOCUMENT_LIMIT = 64 * MIB  # a JSON document a run or a tune wrote (context.json, tune.json)
SCHEDULE_LIMIT = 1024 * MIB  # a simulator schedule (GOAL binary): large by nature
RAW_LIMIT = 16 * 1024 * MIB  # an engine's raw file: every sample of one rank
MAX_DEPTH = 200  # nesting of JSON arrays/objects or TOML arrays/tables

_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


class InputError(UsageError):
    """An input file that cannot be read: the message names it and says why;
    `problem` is the why alone, for callers that word the message themselves."""

    def __init__(self, message, problem=""):
        super().__init__(message)
        self.problem = problem or message


def _fail(path, what, problem, hint=None):
    name = f"{what} {path}" if what else str(path)
    raise InputError(f"{name}: {problem}" + (f"; {hint}" if hint else ""), problem)


def _size_words(n):
    return f"{n // MIB} MiB" if n >= MIB and n % MIB == 0 else f"{n} bytes"


def file_kind(st) -> str:
    """'a directory', 'a FIFO (named pipe)', … for a stat result that is not a regular file."""
    return _KINDS.get(stat.S_IFMT(st.st_mode), "not a regular file")


def regular_file(path, what="", hint="give a regular file", missing_ok=False, limit=None):
    """The os.stat of `path` if it is a regular file (links followed) of at
    most `limit` bytes. A file that is missing is None with `missing_ok`,
    else refused like anything else that is not a regular file: a directory,
    a FIFO, a device, a socket, a symbolic link loop, a path the file system
    refuses."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if missing_ok:
            return None
        _fail(path, what, "does not exist", hint)
    except OSError as e:
        _fail(path, what, describe(e))
    if not stat.S_ISREG(st.st_mode):
        _fail(path, what, f"is {file_kind(st)}, not a regular file", hint)
    if limit is not None and st.st_size > limit:
        _too_big(path, what, limit, hint)
    return st


def _open(path, what, hint):
    try:
        # O_NONBLOCK: a FIFO put in its place since the stat does not block the open.
        return os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as e:
        _fail(path, what, describe(e))


def readable_file(path, what="", hint="give a regular file", limit=None):
    """regular_file(), and the file opens for reading: for a file another
    program reads (a schedule the simulator reads)."""
    regular_file(path, what, hint, limit=limit)
    os.close(_open(path, what, hint))


def read_bytes(path, limit, what="", hint="give a regular file", missing_ok=False):
    """The bytes of the regular file `path`, refused above `limit` bytes.
    None when it is missing and `missing_ok`."""
    if regular_file(path, what, hint, missing_ok, limit) is None:
        return None
    fd = _open(path, what, hint)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            _fail(path, what, "is no longer a regular file", hint)
        try:
            data = f.read(limit + 1)
        except OSError as e:
            _fail(path, what, describe(e))
    if len(data) > limit:
        _too_big(path, what, limit, hint)
    return data


def _too_big(path, what, limit, hint):
    _fail(path, what, f"is larger than the {_size_words(limit)} a file of this kind may hold", hint)


def read_text(path, limit, what="", hint="give a text file", missing_ok=False):
    """The text of `path`, UTF-8 (a byte-order mark is dropped)."""
    data = read_bytes(path, limit, what, hint, missing_ok)
    if data is None:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        _fail(
            path, what, f"is not UTF-8 text (byte {e.start} is {data[e.start : e.start + 1]!r}: a binary file?)", hint
        )


_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)
_TOML_TOKENS = re.compile(
    r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\''
    r"|#[^\n]*|[\[\]{}]"
)


def nested_deeper(text, limit=MAX_DEPTH, tokens=_JSON_TOKENS) -> bool:
    """Whether brackets in `text` (outside strings and TOML comments) nest
    deeper than `limit`, found by a scan that stops there, without parsing."""
    if text.count("[") + text.count("{") <= limit:
        return False  # too few brackets to nest that deep
    depth = 0
    for m in tokens.finditer(text):
        c = m.group()
        if c in "[{":
            depth += 1
            if depth > limit:
                return True
        elif c in "]}":
            depth = max(depth - 1, 0)
    return False


def _check_depth(path, text, tokens, what, hint):
    if nested_deeper(text, MAX_DEPTH, tokens):
        _fail(path, what, f"is nested more than {MAX_DEPTH} levels deep", hint)


def read_json(path, limit=DOCUMENT_LIMIT, what="", hint="give a JSON file", missing_ok=False):
    """The JSON document in `path` (any JSON value); None when it is missing and `missing_ok`."""
    text = read_text(path, limit, what, hint, missing_ok)
    if text is None:
        return None
    _check_depth(path, text, _JSON_TOKENS, what, hint)
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        _fail(path, what, f"is not valid JSON ({e.msg} at line {e.lineno} column {e.colno})", hint)
    except (ValueError, RecursionError) as e:  # a number too long, nesting missed by the scan
        _fail(path, what, f"is not valid JSON ({str(e)[:120]})", hint)


def read_toml(path, limit=CONFIG_LIMIT, what="", hint="give a TOML file"):
    """The TOML document in `path`, as a dict."""
    import tomllib

    text = read_text(path, limit, what, hint)
    _check_depth(path, text, _TOML_TOKENS, what, hint)
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        _fail(path, what, f"is not valid TOML ({e})", hint)
    except RecursionError:
        _fail(path, what, f"is nested more than {MAX_DEPTH} levels deep", hint)


def read_parquet(
    path,
    what="",
    hint="the file is damaged: restore it from a copy, or measure again",
    columns=None,
    missing_ok=False,
    dictionary=None,
):
    """The Parquet table in `path` (a pyarrow.Table), after a check that it is
    a regular file (pyarrow would block on a FIFO). A file that is cut, empty,
    replaced by another format, a directory, unreadable or otherwise not
    readable as Parquet is an InputError. None when missing and `missing_ok`.
    The columns named in `dictionary` are read dictionary-encoded."""
    if regular_file(path, what, hint, missing_ok) is None:
        return None
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # One file: ParquetFile, not read_table, whose datasets import pandas (a third of a second).
        with pq.ParquetFile(path, read_dictionary=dictionary) as file:
            return file.read(columns=columns)
    except (pa.ArrowException, OSError, ValueError, KeyError, TypeError) as e:
        _fail(path, what, f"cannot be read as Parquet ({_first_line(e)})", hint)


def parquet_metadata(path, what="", hint="the file is damaged: restore it from a copy, or measure again"):
    """The key/value metadata of the Parquet file `path` ({} when it has none),
    with the checks of read_parquet."""
    regular_file(path, what, hint)
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return dict(pq.read_schema(path).metadata or {})
    except (pa.ArrowException, OSError, ValueError) as e:
        _fail(path, what, f"cannot be read as Parquet ({_first_line(e)})", hint)


def _first_line(exc):
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def is_regular(path) -> bool:
    """Whether `path` is a regular file (links followed); never raises, never opens it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def open_regular_append(path):
    """A file object appending to `path`, created when missing; OSError (ENXIO-like)
    when `path` is anything but a regular file, without blocking on a FIFO."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, 0o644)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return os.fdopen(fd, "a")
