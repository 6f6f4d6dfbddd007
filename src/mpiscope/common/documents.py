# SPDX-License-Identifier: BSD-3-Clause
"""The JSON documents mpiscope prints (every `--json`): each is an object
whose `schema_version` says which shape it has, described by
docs/schemas/<name>.schema.json (tests/unit/test_json_schemas.py validates real
outputs against them).

A version goes up when a field is removed or renamed, or changes meaning or
unit; adding a field keeps it, so readers ignore fields they do not know.
"""

from __future__ import annotations

from mpiscope.common.jsonable import dumps

SCHEMA_VERSIONS = {
    "show": 1,  # show --json, export --format json, run --json (and the run of sbatch --json)
    "fit": 1,
    "compare": 1,
    "loggp": 1,
    "layers": 1,
    "model-predict": 1,
    "model-check": 1,
    "sim-run": 1,
    "sim-predict": 1,
    "sim-check": 1,
    "sim-whatif": 1,
    "cluster-up": 1,
    "cluster-list": 1,
    "config-show": 1,
    "build": 1,
    "transport-probe": 1,
    "transport-advise": 1,  # with --verify also "verify" (its comparison: the compare document)
    "profile": 1,  # profile --json, show --json of a profile run
    "tune": 1,
    "methods": 1,  # methods --json
    "app": 1,  # app compare --json, show --json of an app run
    "history": 1,  # history --json (with --check: each series' check)
}


def json_document(name: str, doc: dict) -> str:
    """`doc` as JSON text headed by the schema version of document `name`
    (NaN and infinities become null)."""
    return dumps({"schema_version": SCHEMA_VERSIONS[name], **doc})
