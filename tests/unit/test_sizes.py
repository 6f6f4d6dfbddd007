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


@pytest.mark.parametrize("text, count", [("1-1G:+1", "1,073,741,824"), ("0-10000:+1", "10,001"),
                                         ("1-1G:x1.0000001", "up to 207,944,165")])
def test_a_list_of_too_many_sizes_is_refused_with_its_count(text, count):
    with pytest.raises(UsageError) as e:
        parse_sizes(text)
    assert f"gives {count} sizes, more than the 10,000" in str(e.value)


def test_the_limit_itself_is_taken_and_an_endless_step_refused():
    assert len(parse_sizes("1-10000:+1")) == 10_000
    for text in ("1-8:xinf", "1-8:+inf", "1-100:x1.00000001"):
        with pytest.raises(UsageError, match="step|factor"):
            parse_sizes(text)
