# SPDX-License-Identifier: BSD-3-Clause
"""tune.json, the tune's result on disk: written whole under a temporary
name, read back checked. Light to import, so that a command's options may
name a tune's directory without loading the tuner."""

from __future__ import annotations

from pathlib import Path

from mpiscope.common.atomic import write_text
from mpiscope.common.documents import json_document


def save(doc: dict, outdir: Path):
    """tune.json: the document `mpiscope tune --json` prints (schema_version,
    strict JSON: NaN and infinities as null)."""
    write_text(outdir / "tune.json", json_document("tune", doc))


def read(path) -> dict:
    """tune.json as `save` wrote it; refused naming it (UsageError) when it
    is damaged: not a JSON object, of a schema version this mpiscope does not
    read, or holding NaN or an infinity (save writes null for those)."""
    from mpiscope.common.errors import UsageError
    from mpiscope.common.inputs import read_json
    from mpiscope.store import checks
    from mpiscope.common.documents import SCHEMA_VERSIONS

    hint = "run `mpiscope tune` again"
    doc = read_json(path, what="the tune result", hint=hint)
    if not isinstance(doc, dict):
        raise UsageError(
            f"the tune result {path} is damaged: it holds a JSON {type(doc).__name__}, not a tune's result; {hint}"
        )
    checks.version(doc, path, SCHEMA_VERSIONS["tune"], "tune result", hint)
    return checks.finite(doc, path, hint)
