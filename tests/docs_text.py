# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: the text of the README and the documentation site, as the
docs tests read it: Markdown files, their fenced code blocks, and the
`mpiscope` command lines in them."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCS = REPO / "docs"
SHELL_FENCES = {"sh", "bash", "console", "shell"}
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
_PROMPT = re.compile(r"^(\$\s+|#\s+)?(\.venv/bin/)?mpiscope\s")


def markdown_files() -> list[Path]:
    """README.md and every page under docs/."""
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def code_blocks(markdown: str) -> list[tuple[str, list[str]]]:
    """(language, lines) of every fenced code block of a Markdown text."""
    blocks, lang, lines, fence = [], None, [], None
    for line in markdown.splitlines():
        m = _FENCE.match(line)
        if fence is None and m:
            fence, lang, lines = m.group(2), m.group(3).lower(), []
        elif fence is not None and line.strip().startswith(fence):
            blocks.append((lang, lines))
            fence = None
        elif fence is not None:
            lines.append(line)
    return blocks


def _joined(lines: list[str]) -> list[str]:
    """Lines with their backslash continuations joined."""
    out, held = [], ""
    for line in lines:
        if line.rstrip().endswith("\\"):
            held += line.rstrip()[:-1] + " "
            continue
        out.append(held + line)
        held = ""
    return out


def _words(command: str) -> list[str]:
    """A command line's words up to its first shell operator (>, |, &&, ;)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = "#"
    words = []
    for word in lexer:
        if word and set(word) <= set("<>|&;()"):
            break
        words.append(word)
    return words


def mpiscope_commands(path: Path) -> list[list[str]]:
    """The argument lists of every `mpiscope …` line in the shell blocks of a
    file (a prompt, `.venv/bin/` and a trailing # comment taken off)."""
    commands = []
    for lang, lines in code_blocks(path.read_text()):
        if lang not in SHELL_FENCES:
            continue
        for line in _joined(lines):
            text = line.strip()
            m = _PROMPT.match(text)
            if not m:
                continue
            commands.append(_words(text[m.end(1) if m.group(1) else 0:])[1:])
    return commands


# Text that belongs to one machine or one occasion, not to the product: the
# absolute paths of the machine the docs were written on (examples use
# ~/mpiscope or $PWD), and sentences about when or by whom they were written.
MACHINE_PATH = re.compile(r"(?<![\w~.$-])/(?:work|root)/|/home/[a-z_][\w.-]*/|/tmp/tmp\w")
EPISODIC = re.compile("|".join([
    r"\b(?:in )?this session\b", r"\byesterday\b", r"\blast night\b", r"\bat the time of writing\b",
    r"\bwhen this (?:page|tutorial|guide) was written\b", r"\bpreviously\b", r"\buntil recently\b",
    r"\bwe (?:tried|found|measured|ran|saw|decided|noticed)\b", r"\b(?:the|this) (?:script|code|engine) now\b",
    r"\ba hair over\b", r"\bjust missed\b", r"\bthis machine was\b",
]), re.IGNORECASE)


def occasion_hits(name: str, text: str) -> list[str]:
    """'name:line: text' for every line with a machine path or an episodic phrase."""
    return [f"{name}:{n}: {line.strip()[:100]}" for n, line in enumerate(text.splitlines(), 1)
            if MACHINE_PATH.search(line) or EPISODIC.search(line)]
