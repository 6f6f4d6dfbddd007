# SPDX-License-Identifier: BSD-3-Clause
"""The export formats' registry (views/exporters/): `mpiscope export
--format` offers exactly its names and lists what each writes, and every
exporter is found under its own name and says whether it writes a
directory or a stream."""

import pytest

from mpiscope.cli.main import build_parser
from mpiscope.common.errors import UsageError
from mpiscope.views import exporters
from mpiscope.views.export import Exporter


def _format_choices():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    export = sub.choices["export"]
    [fmt] = [a for a in export._actions if a.dest == "format"]
    return tuple(fmt.choices)


def test_the_cli_offers_the_registry():
    assert _format_choices() == exporters.NAMES
    assert set(exporters.NAMES) >= {"csv", "json", "osu", "otf2"}


@pytest.mark.parametrize("name", exporters.NAMES)
def test_each_exporter_declares_its_name_and_kind(name):
    exporter = exporters.get(name)
    assert isinstance(exporter, Exporter)
    assert exporter.name == name
    assert isinstance(exporter.writes_directory, bool)
    assert callable(exporter.export)
    assert exporter.help.strip() and all(len(line) <= 65 for line in exporter.help.splitlines())


def test_export_help_lists_every_format_from_the_registry():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    description = sub.choices["export"].description
    for name in exporters.NAMES:
        first = exporters.get(name).help.splitlines()[0]
        assert f"  {name:<4} {first}" in description.splitlines()


def test_directory_and_stream_formats():
    assert [n for n in exporters.NAMES if exporters.get(n).writes_directory] == ["otf2"]


def test_an_unknown_format_names_the_known_ones():
    with pytest.raises(UsageError, match="unknown export format 'xml': choose one of csv, json, osu, otf2"):
        exporters.get("xml")
