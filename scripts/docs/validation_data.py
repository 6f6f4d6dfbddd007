# SPDX-License-Identifier: BSD-3-Clause
"""MkDocs hook: a validation page's numbers, rendered from the JSON file a
bench script wrote with --json (bench/benchjson.py) and committed beside the
page. The marker

    <!-- bench-data: harness-overhead.json -->

becomes the run's context (machine, MPI, date, commit), the command that
reproduces it, and every table the script printed. Building the site never
runs a benchmark; a marker naming a missing or malformed file fails the build.

Two more markers render the targets' verdicts (validation_targets.py):
`<!-- validation-targets -->` every target, met or missed, for the index;
`<!-- missed-targets -->` every missed one with the section that says why,
for Known limitations. A missed target without such a section fails the build."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mkdocs.exceptions import PluginError

import validation_targets

MARKER = re.compile(r"<!--\s*bench-data:\s*(\S+)\s*-->")
TARGETS_MARKER = "<!-- validation-targets -->"
MISSED_MARKER = "<!-- missed-targets -->"
CONTEXT_KEYS = ("date", "commit", "command", "machine", "mpi", "options")


def load(path: Path) -> dict:
    """A bench document, checked to hold what a page shows."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise PluginError(f"{path}: cannot read the bench data ({e})") from None
    missing = [k for k in CONTEXT_KEYS if k not in doc.get("context", {})]
    if missing or not doc.get("tables"):
        raise PluginError(f"{path}: not a bench document with context and tables "
                          f"(missing: {', '.join(missing) or 'tables'})")
    return doc


def _cell(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e5 else f"{v:.3e}"
    return str(v).replace("|", r"\|")


def render(doc: dict) -> str:
    ctx = doc["context"]
    m = ctx["machine"]
    machine = f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores"
    if m.get("memory_gib"):
        machine += f", {m['memory_gib']:g} GiB"
    if m.get("virtualization"):
        machine += f" ({m['virtualization']} guest)"
    machine += f"; {m.get('os', '?')}, Linux {m.get('kernel', '?')}"
    dirty = " (with uncommitted changes)" if ctx.get("dirty") else ""
    lines = ["| measured | |", "|---|---|",
             f"| command | `{ctx['command']}` |",
             f"| machine | {machine} |",
             f"| MPI | {', '.join(ctx['mpi']) or 'none'} |",
             f"| date | {ctx['date']} |",
             f"| commit | `{(ctx['commit'] or 'unknown')[:12]}`{dirty} |", ""]
    for t in doc["tables"]:
        lines += [f"**{t['title']}**", "",
                  "| " + " | ".join(map(str, t["columns"])) + " |",
                  "|" + "---|" * len(t["columns"])]
        lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in t["rows"]]
        lines += [""] + [f"{note}  " for note in t.get("notes", [])] + [""]
    return "\n".join(lines)


def _title(page: Path) -> str:
    return page.read_text().split("\n", 1)[0].lstrip("# ").strip()


def targets_table(verdicts, directory: Path) -> str:
    """Every target: its page, the target, what its JSON shows, met or missed."""
    lines = ["| page | target | measured | verdict |", "|---|---|---|---|"]
    previous = None
    for v in verdicts:
        page = v.target.page
        name = "" if page == previous else f"[{_title(directory / page)}]({page})"
        verdict = "met" if v.met else f"**missed** ([why](known-limitations.md#{v.target.limitation}))"
        lines.append(f"| {name} | {v.target.target} | {v.measured} | {verdict} |")
        previous = page
    return "\n".join(lines)


def limitation_sections(verdicts, directory: Path) -> dict[str, str]:
    """Known limitations' sections by anchor, checked to explain every missed target."""
    text = (directory / "known-limitations.md").read_text()
    sections = {a: h for h in re.findall(r"^## (.+)$", text, flags=re.M)
                for a in validation_targets.limitation_anchors(f"## {h}")}
    for v in verdicts:
        if not v.met and v.target.limitation not in sections:
            raise PluginError(f"validation: the missed target {v.target.target!r} ({v.target.page}) "
                              f"names no section of Known limitations ({v.target.limitation!r})")
    return sections


def missed_table(verdicts, directory: Path) -> str:
    """Every missed target with the section of Known limitations that explains it."""
    sections = limitation_sections(verdicts, directory)
    lines = ["| target | measured | page | why |", "|---|---|---|---|"]
    for v in verdicts:
        if not v.met:
            anchor = v.target.limitation
            lines.append(f"| {v.target.target} | {v.measured} | [{_title(directory / v.target.page)}]"
                         f"({v.target.page}) | [{sections[anchor]}](#{anchor}) |")
    return "\n".join(lines)


def on_page_markdown(markdown, page, config, files):
    directory = Path(config["docs_dir"]) / Path(page.file.src_uri).parent

    def expand(match):
        return render(load(directory / match.group(1)))

    markdown = MARKER.sub(expand, markdown)
    if TARGETS_MARKER in markdown or MISSED_MARKER in markdown:
        try:
            verdicts = validation_targets.verdicts(directory)
        except (OSError, ValueError, KeyError, StopIteration) as e:
            raise PluginError(f"validation: a target cannot be read from its JSON ({e!r})") from None
        limitation_sections(verdicts, directory)
        markdown = markdown.replace(TARGETS_MARKER, targets_table(verdicts, directory))
        if MISSED_MARKER in markdown:
            markdown = markdown.replace(MISSED_MARKER, missed_table(verdicts, directory))
    return markdown
