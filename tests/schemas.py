# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: the JSON Schemas under docs/schemas/ (draft 2020-12), by name."""

import json
from pathlib import Path

import jsonschema

SCHEMAS = Path(__file__).resolve().parent.parent / "docs" / "schemas"


def schema(name):
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


def validate(name, doc):
    jsonschema.validate(doc, schema(name), cls=jsonschema.Draft202012Validator)


def json_of(argv, capsys):
    """The --json document of `mpiscope ARGV`, run in this process (it must succeed)."""
    from mpiscope.cli.main import build_parser

    args = build_parser().parse_args([str(a) for a in argv])
    assert args.func(args) == 0
    return json.loads(capsys.readouterr().out)
