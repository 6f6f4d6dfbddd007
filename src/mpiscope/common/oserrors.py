# SPDX-License-Identifier: BSD-3-Clause
"""The words for a refusal of the file system: each errno its own cause and
its own remedy, so a permission problem is never reported as a full disk."""

import errno

_WORDS = {
    errno.EACCES: "permission denied; give a path you may use, or change its permissions",
    errno.EPERM: "the operation is not permitted here; give another path",
    errno.ENOENT: "a directory in the path does not exist; create it or give another path",
    errno.ENOTDIR: "a part of the path is a file, not a directory; give another path",
    errno.EISDIR: "it is a directory; give a file name",
    errno.EROFS: "the file system is read-only; write somewhere else",
    errno.ENOSPC: "no space left on the device; free space or write somewhere else",
    errno.EDQUOT: "the disk quota is exhausted; free space or write somewhere else",
    errno.ELOOP: "symbolic links loop (or nest too deep); give a path that resolves",
    errno.ENAMETOOLONG: "the path is too long; give a shorter one",
    errno.ENXIO: (
        "no process has it open for reading (a FIFO without a reader, or a device that is absent); "
        "start the reader first"
    ),
    errno.EBUSY: "it is busy; try again when the program using it is done",
    errno.ETXTBSY: "it is a program that is running; give another path",
    errno.EIO: "an input/output error of the device; check the disk",
    errno.EMFILE: "too many open files; raise the limit (ulimit -n)",
    errno.EXDEV: "it lies on another file system than its directory",
    errno.EFBIG: "the file would be larger than the file system allows",
}


def describe(e: OSError) -> str:
    """What went wrong and what to do, in words, for the OSError `e` (no file name)."""
    words = _WORDS.get(e.errno)
    if words is not None:
        return words
    return (e.strerror or str(e) or type(e).__name__).rstrip(".").lower()
