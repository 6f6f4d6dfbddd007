# SPDX-License-Identifier: BSD-3-Clause
"""The documentation's and the README's text: every `mpiscope` command they
show is accepted by the real parser, the pages show commands, the README
stays a front door (200 lines at most, its quick start `make run` and
`make test`), and every JSON Schema is documented."""

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path

import pytest

from docs_text import (DOCS, EPISODIC, MACHINE_PATH, REPO, code_blocks, markdown_files, mpiscope_commands,
                       occasion_hits)
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


# ---- the validation targets' verdicts (scripts/docs/validation_targets.py) ----

sys.path.insert(0, str(REPO / "scripts" / "docs"))
import validation_data  # noqa: E402  (the site's hook: index and Known limitations tables)
import validation_targets  # noqa: E402

VALIDATION = DOCS / "validation"


def test_every_validation_page_states_a_decided_target():
    pages = {p.name for p in VALIDATION.glob("*.md")} - {"index.md", "known-limitations.md"}
    decided = {t.page for t in validation_targets.TARGETS}
    assert pages == decided, f"pages without a target: {sorted(pages - decided)}"
    assert "<!-- validation-targets -->" in (VALIDATION / "index.md").read_text()


def test_every_missed_target_is_in_known_limitations():
    verdicts = validation_targets.verdicts()
    limitations = (VALIDATION / "known-limitations.md").read_text()
    assert "<!-- missed-targets -->" in limitations
    anchors = validation_targets.limitation_anchors(limitations)
    table = validation_data.missed_table(verdicts, VALIDATION)
    index = validation_data.targets_table(verdicts, VALIDATION)
    for v in verdicts:
        row = f"| {v.target.target} | {v.measured} |"
        assert (row in table) != v.met, row  # missed rows and only they
        assert row + (" met |" if v.met else " **missed**") in index
        if not v.met:
            assert v.target.limitation in anchors, v.target.limitation


def test_a_missed_target_without_a_cause_fails_the_build(tmp_path):
    for p in VALIDATION.glob("*.json"):
        (tmp_path / p.name).write_text(p.read_text())
    (tmp_path / "known-limitations.md").write_text((VALIDATION / "known-limitations.md").read_text())
    doc = json.loads((VALIDATION / "harness-overhead.json").read_text())
    table = next(t for t in doc["tables"] if t["title"].startswith("ratio pingpong"))
    column = table["columns"].index("timer interval removed")
    table["rows"][0][column] = 1.5  # a harness far slower than the loop
    (tmp_path / "harness-overhead.json").write_text(json.dumps(doc))
    verdicts = validation_targets.verdicts(tmp_path)
    harness = next(v for v in verdicts if v.target.page == "harness-overhead.md")
    assert not harness.met and harness.measured == "largest 1.5 ×"
    with pytest.raises(validation_data.PluginError, match="names no section of Known limitations"):
        validation_data.missed_table(verdicts, tmp_path)


# ---- the product, not one machine or one occasion ----

def test_the_docs_hold_no_machine_paths_or_episodes():
    hits = []
    for path in markdown_files():
        hits += occasion_hits(str(path.relative_to(REPO)), path.read_text())
    for data in VALIDATION.glob("*.json"):  # what a validation page renders of it
        doc = json.loads(data.read_text())
        hits += occasion_hits(data.name, json.dumps({"context": doc["context"], "tables": doc["tables"]}))
    assert not hits, "machine paths or episodes (use ~/mpiscope or $PWD; speak of the product):\n" + \
        "\n".join(hits[:40])


@pytest.mark.parametrize("line", ["engine    /work/main/build/engines/x", "cd /root/src", "/home/alice/runs",
                                  "wrote /tmp/tmpab12cd/report.html"])
def test_a_machine_path_is_caught(line):
    assert MACHINE_PATH.search(line)


@pytest.mark.parametrize("line", ["engine    ~/mpiscope/build/engines/x", "export MPISCOPE_OUT=/scratch/$USER/runs",
                                  "not on a node's local `/tmp`", "under $PWD/mpiscope-runs"])
def test_a_portable_path_passes(line):
    assert not MACHINE_PATH.search(line)


@pytest.mark.parametrize("line", ["In this session MPICH aborted", "the script now leaves such a trial out",
                                  "target 40%: a hair over", "We tried a tree first"])
def test_an_episode_is_caught(line):
    assert EPISODIC.search(line)
