# SPDX-License-Identifier: BSD-3-Clause
"""pyarrow without its pandas probe.

The first time pyarrow converts a Python object it asks whether the object
is a pandas one, and to answer it imports pandas: a third of a second that
`mpiscope run` and `show` would pay for nothing, since mpiscope hands
pyarrow numpy arrays and lists. skip_pandas_probe() lets that first question
find pandas missing. pyarrow still imports pandas when a conversion to or
from pandas is asked for (`to_pandas`, `Table.from_pandas`), and from then
on recognises pandas objects again.
"""

from __future__ import annotations

import sys

import pyarrow as pa


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
