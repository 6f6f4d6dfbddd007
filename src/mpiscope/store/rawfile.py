# SPDX-License-Identifier: BSD-3-Clause
"""Reader for the engine's per-rank raw files (docs/reference/formats/raw-files.md, schemas 1 to 3).

A file is a header followed by blocks. The reader returns every complete
block; a block cut short by a crash is ignored and the file is marked
incomplete, so the samples measured before a crash stay usable.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mpiscope.common.errors import UsageError
from mpiscope.common.inputs import RAW_LIMIT, read_bytes

FILE_MAGIC = b"MPSCRAW1"
BLOCK_MAGIC = b"BLOCK___"
BLOCK_END = b"ENDBLOCK"
# 2 adds to series blocks their sample rule, and to the "after" sync block the
# local times recovery.py needs; 3 adds the peers' method blocks (run
# --methods). Versions 1 and 2 stay readable: they hold no method blocks.
SUPPORTED_VERSIONS = (1, 2, 3)

_U32 = struct.Struct("<I")
_U64 = struct.Struct("<Q")
_F64 = np.dtype("<f8")


class RawFormatError(UsageError):
    """A raw file that is not in a format this version can read."""


@dataclass
class RawBlock:
    """One block: its JSON metadata and its columns (local timer seconds).

    The arrays are read-only views on the file's bytes (no copy).
    """

    meta: dict
    t_start: np.ndarray
    t_end: np.ndarray
    t_sched: np.ndarray
    valid: np.ndarray
    # A block whose JSON names its own columns (a "trace" block) carries
    # them here, by name, instead of the four above (which are then empty).
    columns: dict = field(default_factory=dict)

    @property
    def nrows(self) -> int:
        if self.columns:
            return len(next(iter(self.columns.values())))
        return len(self.t_start)


@dataclass
class RawFile:
    path: Path
    header: dict
    blocks: list[RawBlock] = field(default_factory=list)
    complete: bool = True


class _Truncated(Exception):
    """Internal: the data ended before the structure being read."""


def _take(buf, pos, n):
    if pos + n > len(buf):
        raise _Truncated
    return buf[pos : pos + n], pos + n


def _read_json(buf, pos, path, what):
    raw, pos = _take(buf, pos, 4)
    (n,) = _U32.unpack(raw)
    raw, pos = _take(buf, pos, n)
    try:
        return json.loads(bytes(raw).decode("utf-8")), pos
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RawFormatError(f"{path}: the {what} JSON is not valid ({exc})") from None


def _read_header(buf, path):
    magic, pos = _take(buf, 0, 8)
    if bytes(magic) != FILE_MAGIC:
        raise RawFormatError(f"{path}: not an mpiscope raw file (magic {bytes(magic)!r}, expected {FILE_MAGIC!r})")
    raw, pos = _take(buf, pos, 4)
    (version,) = _U32.unpack(raw)
    if version not in SUPPORTED_VERSIONS:
        raise RawFormatError(
            f"{path}: raw schema version {version} is not supported by this mpiscope "
            f"(it reads {', '.join(map(str, SUPPORTED_VERSIONS))}); "
            "analyze it with the mpiscope version that wrote it, or upgrade"
        )
    header, pos = _read_json(buf, pos, path, "file header")
    if not isinstance(header, dict):
        raise RawFormatError(f"{path}: the file header JSON is not an object")
    if header.get("schema_version", version) != version:
        raise RawFormatError(
            f"{path}: header says schema_version {header.get('schema_version')!r} but the binary field says {version}"
        )
    return header, pos


# Column types a block may declare ("columns": [[name, type], ...]).
_COLUMN_TYPES = {"f64": np.dtype("<f8"), "i64": np.dtype("<i8"), "i32": np.dtype("<i4"), "u8": np.dtype("u1")}


def _column_spec(meta, path, pos):
    try:
        spec = [(str(name), _COLUMN_TYPES[kind]) for name, kind in meta["columns"]]
    except (KeyError, TypeError, ValueError):
        raise RawFormatError(
            f"{path}: the block at byte {pos} declares columns this mpiscope cannot read: {meta.get('columns')!r}"
        ) from None
    return spec


def _read_block(buf, pos, path):
    """Return (block, next_pos). Raises _Truncated if the data runs out."""
    magic, p = _take(buf, pos, 8)
    if bytes(magic) != BLOCK_MAGIC:
        raise RawFormatError(f"{path}: expected a block at byte {pos}, found {bytes(magic)!r}")
    meta, p = _read_json(buf, p, path, f"block (byte {pos})")
    if not isinstance(meta, dict):
        raise RawFormatError(f"{path}: the block JSON at byte {pos} is not an object")
    raw, p = _take(buf, p, 8)
    (nrows,) = _U64.unpack(raw)
    if "columns" in meta:
        spec = _column_spec(meta, path, pos)
        if nrows * sum(dt.itemsize for _, dt in spec) + 8 > len(buf) - p:
            raise _Truncated
        columns = {}
        for name, dt in spec:
            columns[name] = np.frombuffer(buf, dtype=dt, count=nrows, offset=p)
            p += dt.itemsize * nrows
        trailer, p = _take(buf, p, 8)
        if bytes(trailer) != BLOCK_END:
            raise RawFormatError(f"{path}: block at byte {pos} has no ENDBLOCK trailer")
        empty = np.empty(0)
        return RawBlock(meta, empty, empty, empty, np.empty(0, dtype=bool), columns), p
    # 25 bytes per row: three f64 columns and one u8 column.
    if nrows * 25 + 8 > len(buf) - p:
        raise _Truncated
    cols = []
    for _ in range(3):
        cols.append(np.frombuffer(buf, dtype=_F64, count=nrows, offset=p))
        p += 8 * nrows
    valid = np.frombuffer(buf, dtype=np.uint8, count=nrows, offset=p).astype(bool)
    p += nrows
    trailer, p = _take(buf, p, 8)
    if bytes(trailer) != BLOCK_END:
        raise RawFormatError(f"{path}: block at byte {pos} has no ENDBLOCK trailer")
    return RawBlock(meta, cols[0], cols[1], cols[2], valid), p


def read_raw(path) -> RawFile:
    """Read a `.raw` file or a crashed rank's `.raw.part` file.

    Complete blocks are returned. A truncated last block is ignored and
    `complete` is False; `complete` is always False for a `.part` file.
    Corruption that is not truncation raises RawFormatError for a `.raw`
    file; in a `.part` file it is treated as the point where the crash cut
    the file. A `.part` file too short to hold its header gives an empty
    header and no blocks.
    """
    path = Path(path)
    is_part = path.name.endswith(".part")
    buf = read_bytes(path, RAW_LIMIT, "raw file", "store the run from its other files, or measure again")
    try:
        header, pos = _read_header(buf, path)
    except _Truncated:
        if is_part:
            return RawFile(path, {}, [], complete=False)
        raise RawFormatError(f"{path}: file ends inside its header ({len(buf)} bytes)") from None

    blocks = []
    complete = not is_part
    while pos < len(buf):
        try:
            block, pos = _read_block(buf, pos, path)
        except _Truncated:
            complete = False
            break
        except RawFormatError:
            if not is_part:
                raise
            complete = False
            break
        blocks.append(block)
    return RawFile(path, header, blocks, complete)
