# SPDX-License-Identifier: BSD-3-Clause
"""numpy_of reads what to_numpy reads (tests/cli/test_arrow_without_pandas: and imports no pandas)."""

import numpy as np
import pyarrow as pa
import pytest

from mpiscope.common.arrow_pandas import numpy_of

CASES = {
    "float64": pa.array(np.linspace(0.0, 1.0, 17)),
    "int32 slice": pa.array(np.arange(40, dtype=np.int32)).slice(3, 11),
    "bool slice": pa.array(np.arange(30) % 3 == 0).slice(5, 19),
    "chunked int64": pa.chunked_array([pa.array(np.arange(3)), pa.array(np.arange(7, 12))]),
    "chunked bool": pa.chunked_array([pa.array(np.array([True, False, True]))]),
    "empty int64": pa.array(np.array([], dtype=np.int64)),
    "with nulls": pa.array([1.5, None, 2.5]),
}


@pytest.mark.parametrize("name", CASES)
def test_numpy_of_gives_the_values_to_numpy_gives(name):
    column = CASES[name]
    expected = column.to_numpy(zero_copy_only=False) if isinstance(column, pa.Array) \
        else column.to_numpy()
    got = numpy_of(column)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_a_view_cannot_change_the_table():
    column = pa.array(np.arange(5.0))
    with pytest.raises(ValueError):
        numpy_of(column)[0] = 9.0
    assert column.to_pylist()[0] == 0.0

