# SPDX-License-Identifier: BSD-3-Clause
"""Importing mpiscope (a fresh Python process) loads no heavy library: the API's
names resolve on first use."""

import subprocess
import sys

import pytest

import mpiscope


def test_import_mpiscope_loads_no_heavy_library():
    code = ("import sys, mpiscope; heavy = {'pandas', 'pyarrow', 'duckdb', 'numpy', 'mpiscope.api'}; "
            "print(sorted(heavy & set(sys.modules)))")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert p.stdout.strip() == "[]"
    assert {"load_run", "runs", "Run"} <= set(dir(mpiscope))
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        mpiscope.nothing  # noqa: B018
