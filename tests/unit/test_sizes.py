# SPDX-License-Identifier: BSD-3-Clause
"""Message sizes as the command line writes them (common/sizes.py): lists,
units and ranges parsed, bad sizes refused saying what to do, sizes
formatted."""

import pytest

from mpiscope.common.errors import UsageError
from mpiscope.common.sizes import format_size, parse_sizes


def test_lists_units_and_ranges():
    assert parse_sizes("1,8,1K") == [1, 8, 1024]
    assert parse_sizes("1-16:x2") == [1, 2, 4, 8, 16]
    assert parse_sizes("1-4M:x2")[-1] == 4 * 1024**2
    assert len(parse_sizes("1-4M:x2")) == 23
    assert parse_sizes("0-32:+8") == [0, 8, 16, 24, 32]
    assert parse_sizes("2M,1K,1K") == [1024, 2 * 1024**2]
    assert parse_sizes("1-100:x10") == [1, 10, 100]
    assert parse_sizes("3kb,1MiB,5B") == [5, 3072, 1024**2]


@pytest.mark.parametrize("text", ["abc", "", "1-", "8-1", "1-8:x1", "1-8:y2", "0-8:x2", "4T",
                                  "-5", "4G"])
def test_bad_sizes_say_what_to_do(text):
    with pytest.raises(UsageError) as e:
        parse_sizes(text)
    assert "--sizes" in str(e.value)


def test_format_size():
    assert [format_size(n) for n in (0, 1, 1024, 1536, 4 * 1024**2)] == ["0", "1", "1K", "1536", "4M"]
