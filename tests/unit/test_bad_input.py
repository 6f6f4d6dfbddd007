# SPDX-License-Identifier: BSD-3-Clause
"""Malformed input refused from the command line and the files it names
alone (bad_inputs.py, every case not in ASKS_MPI): exit code 2 and one line
naming the input and the fix, no traceback, nothing created under --out."""

import pytest

from bad_inputs import ASKS_MPI, CASES, refused_in_process, stored_runs

OWN = [c for c in CASES if c[0] not in ASKS_MPI]


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return stored_runs(tmp_path_factory.mktemp("root") / "runs")


def test_the_table_is_large_and_its_ids_unique():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) >= 100
    assert ASKS_MPI <= set(ids)


@pytest.mark.parametrize("argv, needles", [c[1:] for c in OWN], ids=[c[0] for c in OWN])
def test_bad_input_is_refused_cleanly(argv, needles, tmp_path, root, monkeypatch, capsys):
    refused_in_process(argv, needles, tmp_path, root, monkeypatch, capsys)
