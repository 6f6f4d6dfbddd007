# SPDX-License-Identifier: BSD-3-Clause
"""The documentation's and the README's text: every `mpiscope` command they
show is accepted by the real parser, the pages show commands, the README
stays a front door (200 lines at most, its quick start `make run` and
`make test`), and every JSON Schema is documented."""

import argparse
import contextlib
import io
from pathlib import Path

import pytest

from docs_text import DOCS, REPO, code_blocks, markdown_files, mpiscope_commands
from mpiscope.cli.main import _glue_dash_values, build_parser


def _all_commands():
    for path in markdown_files():
        for argv in mpiscope_commands(path):
            yield pytest.param(argv, id=f"{path.relative_to(REPO)}: {' '.join(argv)[:60]}")


# The checks of the file system a documented command names (the file exists
# on the reader's machine, the directory is writable) hold where it is run,
# not here: their options take any text while the command's syntax is checked.
MACHINE_STATE = {"program", "output_file", "new_file", "output_dir", "output_path", "input_file",
                 "text_file", "machine", "weights", "tune_dir"}


def _without_file_checks(parser):
    for action in parser._actions:
        if getattr(action.type, "kind", None) in MACHINE_STATE:
            action.type = str
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                _without_file_checks(sub)
    return parser


@pytest.mark.parametrize("argv", list(_all_commands()))
def test_every_documented_command_parses(argv):
    argv = _glue_dash_values(argv)
    command = next((a for a in argv if not a.startswith("-")), "")
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            _without_file_checks(build_parser(command)).parse_args(argv)
    except SystemExit as e:  # --help and --version exit 0; a refusal exits 2
        assert e.code == 0, f"mpiscope {' '.join(argv)}: {err.getvalue()}"


def test_the_docs_show_commands():
    counted = {p.relative_to(REPO): len(mpiscope_commands(p)) for p in markdown_files()}
    assert counted[Path("README.md")] >= 5
    assert counted[Path("docs/getting-started/first-run.md")] >= 3


def test_readme_is_a_front_door():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = [line.split("#")[0].strip() for lang, lines in code_blocks(quick)
                for line in lines if line.strip()]
    assert commands == ["make run", "make test"]


def test_every_json_schema_is_documented():
    page = (DOCS / "reference" / "formats" / "json-outputs.md").read_text()
    missing = [p.name for p in (DOCS / "schemas").glob("*.schema.json") if p.name not in page]
    assert not missing, missing
