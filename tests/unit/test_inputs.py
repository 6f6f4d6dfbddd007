# SPDX-License-Identifier: BSD-3-Clause
"""common/inputs.py: only regular files are read, within a size and a
nesting limit, as UTF-8; every failure is one InputError naming the file."""

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mpiscope.common import inputs
from mpiscope.common.inputs import InputError
from permissions import permissions_apply


@pytest.fixture
def nodes(tmp_path):
    """Files of every kind a path can name, made in tmp_path (never /dev)."""
    (tmp_path / "ok.json").write_text('{"a": [1, {"b": "[[[["}]}')
    (tmp_path / "ok.toml").write_text('[run]\nsizes = "1-8"\nnote = "[[[{{{"  # ]]]\n')
    os.mkfifo(tmp_path / "fifo")
    os.mknod(tmp_path / "null", 0o666 | 0o020000, os.makedev(1, 3))
    os.symlink("loop", tmp_path / "loop")
    (tmp_path / "dir").mkdir()
    (tmp_path / "binary").write_bytes(b"\xff\xfe\x00\xc3\x28")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    (tmp_path / "deep.toml").write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    return tmp_path


def test_reads_regular_files(nodes):
    assert inputs.read_json(nodes / "ok.json") == {"a": [1, {"b": "[[[["}]}
    assert inputs.read_toml(nodes / "ok.toml") == {"run": {"sizes": "1-8", "note": "[[[{{{"}}
    assert inputs.read_text(nodes / "ok.json", 100) .startswith("{")
    assert inputs.read_json(nodes / "missing", missing_ok=True) is None


@pytest.mark.parametrize("name, words", [
    ("fifo", "is a FIFO"), ("null", "is a character device"), ("dir", "is a directory"),
    ("loop", "symbolic links loop"), ("missing", "does not exist"),
    ("binary", "is not UTF-8"), ("deep.json", "nested more than 200 levels"),
])
def test_refuses_what_is_not_a_readable_regular_file(nodes, name, words):
    with pytest.raises(InputError) as e:
        inputs.read_json(nodes / name, what="--machine")
    assert str(e.value).startswith(f"--machine {nodes / name}: ")
    assert words in str(e.value)


def test_deep_toml_and_bad_syntax_are_refused(nodes):
    with pytest.raises(InputError, match="nested more than 200"):
        inputs.read_toml(nodes / "deep.toml")
    (nodes / "bad.toml").write_text("a = = 1\n")
    with pytest.raises(InputError, match="is not valid TOML"):
        inputs.read_toml(nodes / "bad.toml")
    (nodes / "bad.json").write_text('{"a": 1,')
    with pytest.raises(InputError, match=r"is not valid JSON \(.* line 1"):
        inputs.read_json(nodes / "bad.json")


def test_size_limit_is_named(nodes):
    (nodes / "big").write_bytes(b"x" * (2 * inputs.MIB + 1))
    with pytest.raises(InputError, match="larger than the 2 MiB"):
        inputs.read_bytes(nodes / "big", 2 * inputs.MIB)
    assert len(inputs.read_bytes(nodes / "big", 3 * inputs.MIB)) == 2 * inputs.MIB + 1


def test_nesting_scan_skips_strings():
    assert not inputs.nested_deeper('["' + "[" * 500 + '"]')
    assert inputs.nested_deeper("[" * 201 + "]" * 201)
    assert not inputs.nested_deeper("[" * 200 + "]" * 200)


def test_parquet_reader(nodes):
    pq.write_table(pa.table({"method": ["a"]}), nodes / "t.parquet")
    assert inputs.read_parquet(nodes / "t.parquet").column("method").to_pylist() == ["a"]
    (nodes / "cut.parquet").write_bytes((nodes / "t.parquet").read_bytes()[:40])
    for name in ("cut.parquet", "fifo", "dir", "ok.json"):
        with pytest.raises(InputError, match=name):
            inputs.read_parquet(nodes / name, what="methods")
    assert inputs.read_parquet(nodes / "none.parquet", missing_ok=True) is None


def test_unreadable_file_is_refused(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text("{}")
    secret.chmod(0)
    with permissions_apply(), pytest.raises(InputError, match="secret.json: permission denied"):
        inputs.read_json(secret)
