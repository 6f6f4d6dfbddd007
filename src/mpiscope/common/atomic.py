# SPDX-License-Identifier: BSD-3-Clause
"""Write every output one way: no half-written file ever carries a final name,
and nothing that is not a regular file is ever replaced.

- A regular file or a new name: written under a temporary name in its
  directory, then renamed over it (a symbolic link's target is, the link stays).
- A character device, a FIFO, /dev/stdout: written in place, as Unix tools do,
  from a temporary file copied in at the end, so a failed command writes
  nothing; a FIFO without a reader is refused, not waited on.
- A directory, a socket, a block device, a name ending in '/': refused with an
  OutputError (exit 2)."""

import contextlib
import errno
import fcntl
import os
import shutil
import stat
import tempfile
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.common.inputs import file_kind
from mpiscope.common.oserrors import describe


_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)  # errors of writing, whoever wrote


class OutputError(UsageError):
    """An output path that cannot be written: the message names it and says why."""


def _refuse(path, problem):
    raise OutputError(f"cannot write {path}: {problem}")


def _in_place(path, st):
    """A descriptor open for writing onto the node `path`, or a refusal."""
    if stat.S_ISBLK(st.st_mode) or stat.S_ISSOCK(st.st_mode):
        _refuse(path, f"it is {file_kind(st)}; give a file name, a character device or a FIFO")
    try:
        # Non-blocking: a FIFO without a reader fails (ENXIO) instead of waiting.
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except OSError as e:
        _refuse(path, describe(e))
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    if stat.S_ISREG(os.fstat(fd).st_mode):  # /dev/stdout redirected to a file: append
        os.lseek(fd, 0, os.SEEK_END)
    return fd


def target(path):
    """How `path` is written: ("replace", file) with the regular file or new
    name to rename onto, or ("in_place", stat) for a node written in place;
    refuses what cannot be written."""
    text = os.fspath(path)
    if text.endswith("/"):
        _refuse(text, "a name ending in '/' is a directory; give a file name")
    try:
        st = os.stat(text)
    except FileNotFoundError:  # a new name, or a link to one: the name the link points at
        real = Path(os.path.realpath(text))
        # The directory as written ('gone/../x' needs 'gone'), then the one the name lands in.
        for parent in (os.path.dirname(text) or ".", real.parent):
            try:
                if not stat.S_ISDIR(os.stat(parent).st_mode):
                    _refuse(text, f"{parent} is not a directory; give a path in a directory")
            except FileNotFoundError:
                _refuse(text, f"the directory {parent} does not exist; create it first")
            except OSError as e:
                _refuse(text, describe(e))
        return "replace", real
    except OSError as e:
        _refuse(text, describe(e))
    if stat.S_ISDIR(st.st_mode):
        _refuse(text, "it is a directory; give a file name")
    if stat.S_ISREG(st.st_mode) and not _descriptor_link(text):
        return "replace", Path(os.path.realpath(text))
    return "in_place", st


def _descriptor_link(path) -> bool:
    """Whether `path` leads through /proc (/dev/stdout, /dev/fd/N): a file
    descriptor of the shell, written in place (renaming onto its target would
    drop what a `>>` appended before)."""
    for _ in range(40):
        if str(path).startswith("/proc/"):
            return True
        if not os.path.islink(path):
            return False
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    return False


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path to write; on success its content becomes
    `path` (see the module's rules); on failure nothing is left behind."""
    how, where = target(path)
    if how == "replace":
        tmp = where.with_name(f".{where.name}.tmp{os.getpid()}")
        try:
            yield tmp
            os.replace(tmp, where)
        except OSError as e:  # the temporary file's error, or a full disk: named as the output
            if e.filename in (str(tmp), tmp) or (e.filename is None and e.errno in _FULL):
                raise OSError(e.errno, e.strerror, str(path)) from None
            raise
        finally:
            _remove(tmp)
        return
    fd = _in_place(path, where)
    scratch = Path(tempfile.mkdtemp(prefix="mpiscope-out-"))
    try:
        tmp = scratch / Path(path).name
        yield tmp
        with os.fdopen(os.dup(fd), "wb") as out:
            if tmp.is_dir():
                _refuse(path, "this output is a directory; give a directory name")
            with open(tmp, "rb") as f:
                shutil.copyfileobj(f, out)
    finally:
        os.close(fd)
        shutil.rmtree(scratch, ignore_errors=True)


def _remove(tmp):
    if tmp.is_dir() and not tmp.is_symlink():
        shutil.rmtree(tmp, ignore_errors=True)
    elif tmp.exists() or tmp.is_symlink():
        tmp.unlink()


def write_bytes(path, data, mode=None):
    """`data` into `path` whole or not at all; `mode` (e.g. 0o755) set on a
    file before the rename (a node written in place keeps its own)."""
    with atomic_path(path) as tmp:
        Path(tmp).write_bytes(data)
        if mode is not None:
            os.chmod(tmp, mode)


def write_text(path, text, mode=None):
    """`text` (UTF-8) into `path` whole or not at all, as write_bytes."""
    write_bytes(path, text.encode("utf-8"), mode)
