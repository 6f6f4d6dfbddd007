"""The documentation site and the README: the site builds strictly (no broken
link, no page left out of the navigation), every `mpiscope` command they show
is accepted by the real parser, the first-run page's commands run, every
validation page shows a bench script's committed data, the README stays a
front door, and project text holds no development history or internal
document numbers."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from docs_text import DOCS, REPO, code_blocks, markdown_files, mpiscope_commands
from mpiscope.cli.main import _glue_dash_values, build_parser

sys.path.insert(0, str(REPO / "scripts" / "docs"))
import validation_data  # noqa: E402  (the site's hook that renders a validation page's data)

MKDOCS = Path(sys.executable).with_name("mkdocs")


def test_site_builds_strictly(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    p = subprocess.run([str(MKDOCS), "build", "--strict", "--quiet", "-d", str(tmp_path / "site")],
                       cwd=REPO, capture_output=True, text=True, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-4000:]
    for page in ("index.html", "reference/cli/run/index.html", "reference/api/index.html",
                 "validation/index.html"):
        assert (tmp_path / "site" / page).is_file(), page
    cli = (tmp_path / "site" / "reference/cli/run/index.html").read_text()
    assert "--time-budget" in cli and "--reps-min" in cli  # generated from the parser


def _all_commands():
    for path in markdown_files():
        for argv in mpiscope_commands(path):
            yield pytest.param(argv, id=f"{path.relative_to(REPO)}: {' '.join(argv)[:60]}")


@pytest.mark.parametrize("argv", list(_all_commands()))
def test_every_documented_command_parses(argv):
    argv = _glue_dash_values(argv)
    command = next((a for a in argv if not a.startswith("-")), "")
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            build_parser(command).parse_args(argv)
    except SystemExit as e:  # --help and --version exit 0; a refusal exits 2
        assert e.code == 0, f"mpiscope {' '.join(argv)}: {err.getvalue()}"


def test_the_docs_show_commands():
    counted = {p.relative_to(REPO): len(mpiscope_commands(p)) for p in markdown_files()}
    assert counted[Path("README.md")] >= 5
    assert counted[Path("docs/getting-started/first-run.md")] >= 3


def test_first_run_commands_run(tmp_path):
    """The first-run page's commands, in order, as a newcomer types them."""
    out = tmp_path / "runs"
    env = {**os.environ, "MPISCOPE_OUT": str(out), "MPISCOPE_PROGRESS": "none"}
    for argv in mpiscope_commands(DOCS / "getting-started" / "first-run.md"):
        p = subprocess.run([sys.executable, "-m", "mpiscope.cli", *argv], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, f"mpiscope {' '.join(argv)}: exit {p.returncode}\n{p.stderr}"


VALIDATION = DOCS / "validation"
DATA_PAGES = sorted(p for p in VALIDATION.glob("*.md") if p.stem not in ("index", "known-limitations"))


@pytest.mark.parametrize("page", DATA_PAGES, ids=lambda p: p.stem)
def test_validation_page_shows_committed_bench_data(page):
    text = page.read_text()
    files = validation_data.MARKER.findall(text)
    assert files, f"{page.name} shows no bench data (<!-- bench-data: FILE.json -->)"
    for name in files:
        data = page.parent / name
        tracked = subprocess.run(["git", "ls-files", "--error-unmatch", str(data)], cwd=REPO,
                                 capture_output=True).returncode == 0
        assert tracked, f"{data} is not committed"
        doc = validation_data.load(data)  # context and tables, as the page renders them
        script = doc["context"]["command"].split()[1]
        assert (REPO / script).is_file(), script
        assert Path(script).name in text, f"{page.name} does not name {script}"
        assert all(t["rows"] for t in doc["tables"]), f"{name} has an empty table"


def test_readme_is_a_front_door():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    quick = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = [line.split("#")[0].strip() for lang, lines in code_blocks(quick)
                for line in lines if line.strip()]
    assert commands == ["make run", "make test"]


# Development history and internal document numbers, as they appear in text
# (built from parts so that this file does not match itself).
DIARY = re.compile("|".join([
    r"\b[Ss]tops? [0-9]{1,2}\b", "this " + "stop", r"\bseed 00[0-4]\b", "thesis " + "000",
    r"\bpaper 00[0-4]\b", "dissertation " + "002", r"tried[^.]{0,40}not kept", r"\bGo [0-9]+ \(",
    "Measured " + "here", "PLACE" + "HOLDER", "load " + "average",
]))


def test_no_development_history_in_project_text():
    files = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                           text=True).stdout.split("\0")
    hits = []
    for name in filter(None, files):
        path = REPO / name
        if not path.is_file() or path.suffix in (".parquet", ".png", ".raw", ".duckdb"):
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if DIARY.search(line):
                hits.append(f"{name}:{n}: {line.strip()[:100]}")
    assert not hits, "development history or internal numbers:\n" + "\n".join(hits[:40])


def test_every_json_schema_is_documented():
    page = (DOCS / "reference" / "formats" / "json-outputs.md").read_text()
    missing = [p.name for p in (DOCS / "schemas").glob("*.schema.json") if p.name not in page]
    assert not missing, missing
