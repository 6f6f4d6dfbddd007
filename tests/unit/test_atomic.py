# SPDX-License-Identifier: BSD-3-Clause
"""common/atomic.py: regular files are replaced by a rename, nodes written in
place and never replaced, and what cannot be written is refused."""

import os
import stat
import threading

import pytest

from mpiscope.common import atomic
from mpiscope.common.atomic import OutputError


def _null(path):
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # like /dev/null, in tmp


def test_regular_file_and_new_name_are_renamed_onto(tmp_path):
    (tmp_path / "old").write_text("old")
    atomic.write_text(tmp_path / "old", "new")
    atomic.write_text(tmp_path / "fresh", "x", mode=0o750)
    assert (tmp_path / "old").read_text() == "new"
    assert stat.S_IMODE(os.stat(tmp_path / "fresh").st_mode) == 0o750
    assert sorted(os.listdir(tmp_path)) == ["fresh", "old"]


def test_a_link_keeps_pointing_at_its_written_target(tmp_path):
    (tmp_path / "target").write_text("old")
    os.symlink("target", tmp_path / "link")
    atomic.write_text(tmp_path / "link", "new")
    assert os.path.islink(tmp_path / "link") and (tmp_path / "target").read_text() == "new"


def test_a_character_device_is_written_in_place(tmp_path):
    _null(tmp_path / "null")
    atomic.write_text(tmp_path / "null", "discarded")
    assert stat.S_ISCHR(os.stat(tmp_path / "null").st_mode)
    assert os.listdir(tmp_path) == ["null"]


def test_a_fifo_with_a_reader_gets_the_bytes_and_stays_a_fifo(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the reader is there before the write
    reader = threading.Thread(target=lambda: got.append(_drain(fd)))
    reader.start()
    atomic.write_text(fifo, "through the pipe\n")
    reader.join(20)
    assert got == [b"through the pipe\n"]
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


def _drain(fd):
    import select

    os.set_blocking(fd, True)
    data = b""
    while True:
        select.select([fd], [], [], 20)
        chunk = os.read(fd, 65536)
        if not chunk and data:
            break
        data += chunk
    os.close(fd)
    return data


@pytest.mark.parametrize("name, words", [
    ("fifo", "no process has it open for reading"), ("dir", "it is a directory"),
    ("new/", "ending in '/'"), ("nodir/x", "does not exist"), ("file/x", "not a directory"),
    ("gone/../x", "gone/.. does not exist"),
])
def test_refusals_name_the_path_and_the_cause(tmp_path, name, words):
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    (tmp_path / "file").write_text("")
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(OutputError, match=words):
        atomic.write_text(f"{tmp_path}/{name}", "x")
    assert sorted(os.listdir(tmp_path)) == before
    assert stat.S_ISFIFO(os.stat(tmp_path / "fifo").st_mode)


def test_a_failed_write_leaves_nothing(tmp_path):
    _null(tmp_path / "null")
    for name in ("new", "null"):
        with pytest.raises(RuntimeError):
            with atomic.atomic_path(tmp_path / name) as tmp:
                tmp.write_text("half")
                raise RuntimeError("the writer failed")
    assert os.listdir(tmp_path) == ["null"]


def test_a_descriptor_link_is_appended_to_not_renamed_onto(tmp_path):
    """/dev/stdout after `>> log` is /proc/self/fd/1: what the log held stays."""
    log = tmp_path / "log"
    log.write_text("first\n")
    with open(log, "a") as f:
        atomic.write_text(f"/proc/self/fd/{f.fileno()}", "second\n")
    assert log.read_text() == "first\nsecond\n"
    assert os.listdir(tmp_path) == ["log"]
