# SPDX-License-Identifier: BSD-3-Clause
"""Raw files read back (store/rawfile.py): round trips, files cut at any
point (part files never complete), and damaged headers, magic, versions,
trailers and blocks refused with a clear error."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpiscope.common.errors import UsageError
from mpiscope.store.rawfile import RawFormatError, read_raw
from rawgen import encode_block, encode_header, write_raw

HEADER = {"schema_version": 1, "rank": 1, "size": 2, "launch": 0, "host": "n0", "cpus": "1"}
SYNC = {"meta": {"kind": "sync", "phase": "before",
                 "model": {"offset_s": 0.5, "drift": 0.0, "ref_s": 0.0}}}
SERIES = {"meta": {"kind": "series", "bench": "pingpong", "size": 8, "role": "responder"},
          "t_start": [1.0, 2.0, 3.0], "t_end": [1.5, 2.5, 3.5],
          "t_sched": [np.nan, np.nan, np.nan], "valid": [1, 0, 1]}
IDLE = {"meta": {"kind": "series", "bench": "oneway", "size": 8, "role": "idle"}}


def test_round_trip(tmp_path):
    path = write_raw(tmp_path / "rank-1.raw", HEADER, [SYNC, SERIES, IDLE])
    raw = read_raw(path)
    assert raw.complete
    assert raw.header == HEADER
    assert [b.meta for b in raw.blocks] == [SYNC["meta"], SERIES["meta"], IDLE["meta"]]
    sync, series, idle = raw.blocks
    assert sync.nrows == 0 and idle.nrows == 0
    np.testing.assert_array_equal(series.t_start, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(series.t_end, [1.5, 2.5, 3.5])
    assert np.isnan(series.t_sched).all()
    assert series.valid.dtype == bool
    np.testing.assert_array_equal(series.valid, [True, False, True])


def test_header_only_file_is_complete(tmp_path):
    raw = read_raw(write_raw(tmp_path / "rank-0.raw", HEADER, []))
    assert raw.complete and raw.blocks == []


def test_every_truncation_of_the_last_block_is_ignored(tmp_path):
    last = encode_block(SERIES["meta"], SERIES["t_start"], SERIES["t_end"],
                        SERIES["t_sched"], SERIES["valid"])
    for cut in range(1, len(last) + 1):
        path = write_raw(tmp_path / "rank-1.raw", HEADER, [SYNC, IDLE, SERIES], cut_last=cut)
        raw = read_raw(path)
        if cut == len(last):  # the whole block is gone: nothing was cut short
            assert raw.complete
        else:
            assert not raw.complete, cut
        assert [b.meta for b in raw.blocks] == [SYNC["meta"], IDLE["meta"]], cut


def test_part_file_is_never_complete(tmp_path):
    path = write_raw(tmp_path / "rank-1.raw.part", HEADER, [SYNC, SERIES])
    raw = read_raw(path)
    assert not raw.complete
    assert len(raw.blocks) == 2


def test_part_file_cut_inside_header(tmp_path):
    path = tmp_path / "rank-1.raw.part"
    path.write_bytes(encode_header(HEADER)[:-3])
    raw = read_raw(path)
    assert raw.header == {} and raw.blocks == [] and not raw.complete


def test_raw_file_cut_inside_header_is_an_error(tmp_path):
    path = tmp_path / "rank-1.raw"
    path.write_bytes(encode_header(HEADER)[:10])
    with pytest.raises(RawFormatError, match="header"):
        read_raw(path)


def test_bad_magic(tmp_path):
    path = tmp_path / "rank-0.raw"
    path.write_bytes(encode_header(HEADER, magic=b"NOTMPSC1"))
    with pytest.raises(RawFormatError, match="not an mpiscope raw file") as exc:
        read_raw(path)
    assert isinstance(exc.value, UsageError)
    assert "rank-0.raw" in str(exc.value)


def test_unknown_schema_version(tmp_path):
    path = write_raw(tmp_path / "rank-0.raw", {**HEADER, "schema_version": 99}, [], version=99)
    with pytest.raises(RawFormatError, match="schema version 99 is not supported"):
        read_raw(path)


def test_header_version_disagreeing_with_binary_field(tmp_path):
    path = write_raw(tmp_path / "rank-0.raw", {**HEADER, "schema_version": 3}, [], version=1)
    with pytest.raises(RawFormatError, match="schema_version"):
        read_raw(path)


def test_corrupt_trailer(tmp_path):
    data = encode_header(HEADER) + encode_block(**SERIES)[:-8] + b"GARBAGE!"
    (tmp_path / "rank-1.raw").write_bytes(data)
    with pytest.raises(RawFormatError, match="ENDBLOCK"):
        read_raw(tmp_path / "rank-1.raw")
    # In a crashed rank's .part file the same bytes just end the readable part.
    (tmp_path / "rank-1.raw.part").write_bytes(encode_header(HEADER) + encode_block(**SYNC) +
                                               data[len(encode_header(HEADER)):])
    raw = read_raw(tmp_path / "rank-1.raw.part")
    assert [b.meta for b in raw.blocks] == [SYNC["meta"]] and not raw.complete


def test_garbage_between_blocks(tmp_path):
    data = encode_header(HEADER) + encode_block(**SYNC) + b"XXXXXXXXXXXXXXXXXXXXXXXX"
    (tmp_path / "rank-1.raw").write_bytes(data)
    with pytest.raises(RawFormatError, match="expected a block"):
        read_raw(tmp_path / "rank-1.raw")


@settings(max_examples=50, deadline=None)
@given(st.lists(st.tuples(st.floats(allow_nan=True), st.floats(allow_nan=True),
                          st.floats(allow_nan=True), st.booleans()), max_size=40),
       st.integers(min_value=0, max_value=3))
def test_round_trip_property(tmp_path_factory, rows, nblocks):
    path = tmp_path_factory.mktemp("raw") / "rank-0.raw"
    cols = list(zip(*rows)) if rows else [(), (), (), ()]
    blocks = [{"meta": {"kind": "series", "i": i}, "t_start": cols[0], "t_end": cols[1],
               "t_sched": cols[2], "valid": cols[3]} for i in range(nblocks)]
    raw = read_raw(write_raw(path, HEADER, blocks))
    assert raw.complete and len(raw.blocks) == nblocks
    for b in raw.blocks:
        np.testing.assert_array_equal(b.t_start, np.array(cols[0], dtype=float))
        np.testing.assert_array_equal(b.t_end, np.array(cols[1], dtype=float))
        np.testing.assert_array_equal(b.t_sched, np.array(cols[2], dtype=float))
        np.testing.assert_array_equal(b.valid, np.array(cols[3], dtype=bool))
