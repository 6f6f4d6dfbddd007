# SPDX-License-Identifier: BSD-3-Clause
"""ingest builds its Arrow columns on the numpy buffers (pyarrow's own
conversion would import numpy.ma): the same arrays as pa.array gives."""

import numpy as np
import pyarrow as pa
import pytest

from mpiscope.store.ingest import _arrow

RNG = np.random.default_rng(7)


def _same(built, expected):
    """Equal to the bit (Arrow's equals takes NaN for unequal to itself)."""
    if built.type != expected.type or built.null_count or expected.null_count or len(built) != len(expected):
        return False
    if built.type == pa.float64():
        return built.to_numpy().tobytes() == expected.to_numpy().tobytes()
    return built.equals(expected)


@pytest.mark.parametrize("n", [0, 1, 7, 8, 9, 64, 1001])
def test_every_column_type_as_pa_array_makes_it(n):
    floats = RNG.normal(size=n)
    floats[::5] = np.nan
    if n > 3:
        floats[1], floats[2] = np.inf, -0.0
    columns = [
        (floats, pa.float64()),
        (RNG.integers(-(2**40), 2**40, n), pa.int64()),
        (RNG.integers(-5, 2**20, n).astype(np.int32), pa.int32()),
        (RNG.random(n) < 0.3, pa.bool_()),
    ]
    for values, kind in columns:
        assert _same(_arrow(values, kind), pa.array(values, type=kind))
        for start, stop in ((1, n), (3, n - 2)):  # slices, as row groups cut them
            if 0 <= start <= stop:
                assert _same(_arrow(values[start:stop], kind), pa.array(values[start:stop], type=kind))


def test_what_the_buffer_cannot_hold_is_converted():
    strided = np.arange(10, dtype=np.int64)[::2]
    assert _same(_arrow(strided, pa.int64()), pa.array(strided, type=pa.int64()))
    wider = np.arange(5, dtype=np.int64)
    assert _same(_arrow(wider, pa.int32()), pa.array(wider, type=pa.int32()))
