# SPDX-License-Identifier: BSD-3-Clause
"""MkDocs hook: the command-line reference, generated from the real argparse
parser when the site is built, so it cannot drift from the code.

Every command of `mpiscope.cli.commands.COMMANDS` becomes a page
`reference/cli/<command>.md` (its subcommands as sections of that page);
`reference/cli/index.md` is written by hand. A command with no entry in the
navigation fails a strict build (mkdocs.yml: validation.nav.omitted_files)."""

from __future__ import annotations

import argparse
import re

from mkdocs.structure.files import File

from mpiscope.cli.commands import COMMANDS
from mpiscope.cli.main import build_parser

WIDTH = 80


def _formatter(parser):
    return argparse.HelpFormatter(parser.prog, width=WIDTH, max_help_position=40)


def _escape(text: str) -> str:
    """Markdown-safe inline text: table pipes escaped, no line breaks."""
    return " ".join(text.split()).replace("|", r"\|").replace("<", "&lt;")


def _help(parser, action) -> str:
    if action.help in (None, argparse.SUPPRESS):
        return ""
    return _escape(_formatter(parser)._expand_help(action))


def _flags(action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest.upper()}`"
    takes_value = action.nargs != 0
    value = ""
    if takes_value:
        if action.choices is not None and action.metavar is None:
            value = " {" + ",".join(map(str, action.choices)) + "}"
        else:
            metavar = action.metavar or action.dest.upper()
            value = f" {metavar if isinstance(metavar, str) else ' '.join(metavar)}"
    return ", ".join(f"`{o}{value}`" for o in action.option_strings)


def _subparsers(parser):
    return [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]


def _options_table(parser) -> list[str]:
    lines = []
    for group in parser._action_groups:
        actions = [a for a in group._group_actions
                   if a.help != argparse.SUPPRESS and not isinstance(a, argparse._SubParsersAction)
                   and "-h" not in a.option_strings]
        if not actions:
            continue
        title = {"positional arguments": "Arguments", "options": "Options"}.get(group.title,
                                                                                 group.title)
        lines += ["", f"**{title[:1].upper()}{title[1:]}**", "", "| option | meaning |",
                  "|---|---|"]
        lines += [f"| {_flags(a)} | {_help(parser, a)} |" for a in actions]
    return lines


def _text_block(text: str) -> list[str]:
    return ["", "```text", text.rstrip("\n"), "```"] if text and text.strip() else []


def _prose(text: str) -> list[str]:
    """A description as paragraphs; kept as written when it is laid out
    (indented lines: a list or a table)."""
    if any(line.startswith(" ") for line in text.splitlines()):
        return _text_block(text)
    paragraphs = [_escape(p) for p in re.split(r"\n\s*\n", text.strip())]
    return [line for p in paragraphs for line in ("", p)]


def _describe(parser, heading: str, depth: int, summary: str | None = None) -> list[str]:
    """One parser as Markdown: its one-line summary, usage, description,
    options, examples, then each of its subcommands one heading level down."""
    lines = ["#" * depth + " " + heading, ""]
    if summary:
        lines += [_escape(summary.replace("%%", "%")) + ".", ""]
    lines += ["```text", _formatter(parser)._format_usage(parser.usage, parser._actions,
                                                           parser._mutually_exclusive_groups,
                                                           "usage: ").rstrip(), "```"]
    if parser.description:
        lines += _prose(parser.description)
    lines += _options_table(parser)
    if parser.epilog:
        lines += _text_block(parser.epilog)
    for sub in _subparsers(parser):
        helps = {a.dest: a.help for a in sub._choices_actions}
        for name, child in sub.choices.items():
            lines += [""] + _describe(child, f"`{child.prog}`", depth + 1, helps.get(name))
    return lines


def command_page(name: str) -> str:
    """The Markdown page of one command."""
    parser = build_parser(name)
    command = _subparsers(parser)[0].choices[name]
    body = _describe(command, f"`mpiscope {name}`", 1, COMMANDS[name].help)
    generated = ("<!-- Generated from the argparse parser by scripts/docs/cli_reference.py "
                 "when the site is built; edit the code's help texts, not this page. -->")
    return "\n".join([generated, *body, ""])


def on_files(files, config):
    for name in COMMANDS:
        files.append(File.generated(config, f"reference/cli/{name}.md", content=command_page(name)))
    return files
