# SPDX-License-Identifier: BSD-3-Clause
"""Storing and reading a run's samples imports no pandas (a fresh Python process)."""

import subprocess
import sys


def test_ingest_and_reading_samples_import_no_pandas():
    code = """
import sys
import numpy as np, pyarrow as pa
from mpiscope.store import ingest, samples
from mpiscope.common.arrow_pandas import numpy_of
names = pa.array(np.array(["a", "a", "b"], dtype=object), pa.string())
table = pa.table({"bench": names, "algo": names, "size": pa.array(np.array([1, 1, 2]))})
samples.split_series(table)
numpy_of(table["size"])
print("pandas" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
