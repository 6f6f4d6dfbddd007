# SPDX-License-Identifier: BSD-3-Clause
"""pyarrow without pandas where mpiscope needs none.

pyarrow imports pandas (a third of a second) the first time it converts a
Python object or turns an array into numpy, to recognise pandas' objects
and missing values. `mpiscope run` and `show` hand pyarrow numpy arrays and
read numbers back, so they need none of that: skip_pandas_probe() lets the
conversion's first question find pandas missing, and numpy_of() reads an
array's values without to_numpy(). pyarrow still imports pandas when a
conversion to or from pandas is asked for (`to_pandas`, `Table.from_pandas`).
"""

from __future__ import annotations

import sys

import numpy as np
import pyarrow as pa

_NUMPY = {
    pa.int8(): np.int8,
    pa.int16(): np.int16,
    pa.int32(): np.int32,
    pa.int64(): np.int64,
    pa.uint8(): np.uint8,
    pa.uint16(): np.uint16,
    pa.uint32(): np.uint32,
    pa.uint64(): np.uint64,
    pa.float32(): np.float32,
    pa.float64(): np.float64,
}


class _PandasMissing:
    """A finder that says pandas is not installed, while the probe runs."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "pandas":
            raise ModuleNotFoundError("pandas is left out of pyarrow's first probe", name=name)
        return None


def skip_pandas_probe() -> None:
    """Makes pyarrow's pandas probe answer "missing" unless pandas is already imported."""
    if "pandas" in sys.modules:
        return
    sys.meta_path.insert(0, _PandasMissing)
    try:
        pa.array([0], pa.int8())  # the probe runs here, once per process
    finally:
        sys.meta_path.remove(_PandasMissing)


def numpy_of(column) -> np.ndarray:
    """The values of a numeric or boolean array or chunked array without
    nulls, as numpy (read-only; a view where Arrow's buffer allows it).
    Other arrays go through to_numpy()."""
    if isinstance(column, pa.ChunkedArray):
        if column.num_chunks != 1:
            column = column.combine_chunks()
        else:
            column = column.chunk(0)
    n, offset = len(column), column.offset
    if column.null_count or not (column.type in _NUMPY or pa.types.is_boolean(column.type)):
        return column.to_numpy(zero_copy_only=False)
    data = column.buffers()[1]
    if data is None:  # an empty array
        return np.empty(0, dtype=_NUMPY.get(column.type, np.bool_))
    if pa.types.is_boolean(column.type):
        bits = np.unpackbits(np.frombuffer(data, np.uint8), count=offset + n, bitorder="little")
        return bits[offset:].view(np.bool_)
    view = np.frombuffer(data, _NUMPY[column.type], count=n, offset=offset * column.type.byte_width)
    view.flags.writeable = False  # Arrow's buffers are immutable
    return view
