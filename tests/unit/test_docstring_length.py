# SPDX-License-Identifier: BSD-3-Clause
"""A docstring says what and why in a few lines: none in src/mpiscope (a
module's, a class's or a function's) runs over ten lines; detail belongs in
short comments where the code does it, numbers on the validation pages."""

import ast
from pathlib import Path

import mpiscope

MAX_LINES = 10
SRC = Path(mpiscope.__file__).parent


def _docstrings(path):
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node)
            if doc is not None:
                yield getattr(node, "name", "module"), getattr(node, "lineno", 1), doc


def test_no_docstring_runs_over_ten_lines():
    long = [f"{path.relative_to(SRC)}:{line} {name}: {len(doc.splitlines())} lines"
            for path in sorted(SRC.rglob("*.py"))
            for name, line, doc in _docstrings(path)
            if len(doc.splitlines()) > MAX_LINES]
    assert not long, "docstrings over ten lines:\n" + "\n".join(long)


def test_the_count_sees_a_long_docstring(tmp_path):
    f = tmp_path / "m.py"
    f.write_text('def f():\n    """' + "\n".join(f"line {i}" for i in range(11)) + '"""\n')
    [(_, _, doc)] = _docstrings(f)
    assert len(doc.splitlines()) == 11
