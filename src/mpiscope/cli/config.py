# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope config show` and `mpiscope config get KEY`: the defaults the
environment and the config files set (cli/config_defaults.py), and where each
comes from."""

from __future__ import annotations

import argparse
import os
import sys

from mpiscope.cli import config_defaults
from mpiscope.cli.commands import command_parser
from mpiscope.cli.options import add_json

# The command whose parser gives an every-command setting (out) its built-in default.
_ANY_COMMAND = "runs"


def _actions():
    """{key: the option's argparse action}, from the parsers of the commands
    the settings belong to (built without any configured default)."""
    from mpiscope.cli.main import build_parser

    actions, parsers = {}, {}
    for s in config_defaults.SETTINGS:
        command = s.command or _ANY_COMMAND
        if command not in parsers:
            sub = next(a for a in build_parser(command)._actions if isinstance(a, argparse._SubParsersAction))
            parsers[command] = sub.choices[command]
        actions[s.key] = next(a for a in parsers[command]._actions if s.option in a.option_strings)
    return actions


def resolved():
    """[(key, value, source)] of every setting, each value checked by its option."""
    given = config_defaults.effective()
    rows = []
    for key, action in _actions().items():
        if key in given:
            value, source = given[key]
            rows.append((key, config_defaults.convert(action, config_defaults.BY_KEY[key], value, source), source))
        else:
            rows.append((key, action.default, config_defaults.BUILT_IN))
    return rows


def _files():
    return {"user": config_defaults.user_file(), "project": config_defaults.project_file()}


def cmd_show(args) -> int:
    rows = resolved()
    if args.json:
        from mpiscope.common.documents import json_document

        sys.stdout.write(
            json_document(
                "config-show",
                {
                    "settings": [{"key": k, "value": v, "source": s} for k, v, s in rows],
                    "files": {name: {"path": path, "exists": os.path.isfile(path)} for name, path in _files().items()},
                },
            )
        )
        return 0
    from mpiscope.views.text import table

    lines = [[k, "-" if v is None else str(v), s] for k, v, s in rows]
    print(table(["setting", "value", "source"], lines, [False, False, False]))
    print()
    for name, path in _files().items():
        print(f"{name + ' file:':14s}{path} ({'read' if os.path.isfile(path) else 'not found'})")
    return 0


def _key(text):
    """config get KEY: a known setting."""
    if text not in config_defaults.BY_KEY:
        raise argparse.ArgumentTypeError(
            f"unknown setting {str(text)[:40]!r}; known settings: {', '.join(config_defaults.BY_KEY)}"
        )
    return text


_key.kind = "text"  # type: ignore[attr-defined]


def cmd_get(args) -> int:
    value = next(v for k, v, _ in resolved() if k == args.key)
    print("" if value is None else value)
    return 0


def add_config_command(subparsers) -> None:
    p = command_parser(
        subparsers,
        "config",
        description="""\
Defaults for options, from (highest first) the command line, the environment
(MPISCOPE_OUT), the project file ./mpiscope.toml, the user file
($MPISCOPE_CONFIG, else $XDG_CONFIG_HOME/mpiscope/config.toml, else
~/.config/mpiscope/config.toml), and mpiscope's own. A file sets `out` at the
top and run options in a [run] table, report options in a [report] table,
each named as its option without the dashes.\
""",
        epilog="""\
example file:
  out = "/scratch/me/mpiscope-runs"
  [run]
  mpi = "mpich"
  np = 8
  exclude = "alltoall"
  [report]
  jobs = 0

examples:
  mpiscope config show
  mpiscope config get out\
""",
    )
    sub = p.add_subparsers(dest="config_command", metavar="SUBCOMMAND", parser_class=subparsers._parser_class)
    sub.required = True
    show = sub.add_parser("show", help="every setting with its value and where it comes from")
    add_json(show, "print the settings and the files as JSON")
    show.set_defaults(func=cmd_show)
    get = sub.add_parser("get", help="the value of one setting (for scripts)")
    get.add_argument("key", metavar="KEY", type=_key, help=f"one of {', '.join(config_defaults.BY_KEY)}")
    get.set_defaults(func=cmd_get)
