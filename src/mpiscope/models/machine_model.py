# SPDX-License-Identifier: BSD-3-Clause
"""Machine model files: the LogGP parameters of a run (loggp.py) as versioned
JSON (format "mpiscope-machine-model"), for the simulator and the cost models
to load. Every value is an Estimate in base units, null for NaN; the loader
refuses a schema version it does not know, and a writer never overwrites a
file. The fields: docs/reference/formats/machine-model.md."""

from __future__ import annotations

import dataclasses
import datetime
import json
import math
from pathlib import Path

from mpiscope.common.atomic import write_text
from mpiscope.common.errors import UsageError
from mpiscope.stats.estimate import Estimate
from mpiscope.common.jsonable import plain

FORMAT = "mpiscope-machine-model"
SCHEMA_VERSION = 1
PARAM_NAMES = ("EEL", "o_s", "o_r", "g", "G", "L", "g_over_G", "bandwidth", "overlap")
UNITS = {
    "EEL": "s",
    "o_s": "s",
    "o_r": "s",
    "g": "s",
    "G": "s/B",
    "L": "s",
    "g_over_G": "B",
    "bandwidth": "B/s",
    "overlap": "s",
    "size": "B",
}


@dataclasses.dataclass
class MachineModel:
    schema_version: int
    created: str
    source: dict
    base_size: int | None
    params: dict  # name -> Estimate or None
    tables: dict  # "eel"/"o_s"/"o_r": [(size, Estimate)]; "g": {"q1": [(size, Estimate)]}
    one_sided: dict
    flags: list
    notes: list

    def param(self, name) -> float:
        """The point value of a parameter in base units (NaN when undefined)."""
        e = self.params.get(name)
        return math.nan if e is None else e.point

    def to_json(self) -> str:
        doc = {
            "format": FORMAT,
            "schema_version": self.schema_version,
            "created": self.created,
            "source": self.source,
            "units": UNITS,
            "base_size": self.base_size,
            "params": {n: self.params.get(n) for n in PARAM_NAMES},
            "tables": {
                k: (_pairs_doc(v) if isinstance(v, list) else {q: _pairs_doc(rows) for q, rows in v.items()})
                for k, v in self.tables.items()
            },
            "one_sided": {
                mode: {
                    "latency": _pairs_doc(v.get("latency", [])),
                    "gap": _pairs_doc(v.get("gap", [])),
                    "G": v.get("G"),
                }
                for mode, v in self.one_sided.items()
            },
            "flags": self.flags,
            "notes": self.notes,
        }
        return json.dumps(plain(doc), indent=2, sort_keys=False) + "\n"


def _pairs_doc(rows):
    return [[int(size), est] for size, est in rows]


def from_loggp(result) -> MachineModel:
    """The model of a LogGPResult."""
    run = result.run
    source = {
        "run_id": result.run_id,
        "mpi": run.mpi,
        "mpi_library": (str(run.mpi_library or "").splitlines() or [""])[0],
        "hosts": run.hosts,
        "np": run.np,
        "git_sha": run.git_sha,
        "created": run.created,
        "bootstrap": {"seed": result.seed, "resamples": result.n_boot},
    }
    if run.cluster:
        source["cluster"] = run.cluster.get("name")
    tables: dict = {
        "eel": sorted(result.eel.items()),
        "o_s": [(o.size, o.value) for o in result.overheads.get("send", []) if o.value is not None],
        "o_r": [(o.size, o.value) for o in result.overheads.get("receive", []) if o.value is not None],
        "g": {},
    }
    for size, by_q in sorted(result.gaps.items()):
        for q, est in sorted(by_q.items()):
            tables["g"].setdefault(f"q{q}", []).append((size, est))
    one_sided = {
        mode: {"latency": sorted(v["latency"].items()), "gap": sorted(v["gap"].items()), "G": v.get("G")}
        for mode, v in result.one_sided.items()
    }
    return MachineModel(
        SCHEMA_VERSION,
        datetime.datetime.now().isoformat(timespec="seconds"),
        source,
        result.base_size,
        {n: result.params.get(n) for n in PARAM_NAMES},
        tables,
        one_sided,
        list(result.flags),
        list(result.notes),
    )


def save(model: MachineModel, path) -> Path:
    """Writes the model to `path` (atomically); refuses to overwrite a file."""
    path = Path(path)
    if path.exists():
        raise UsageError(f"{path} exists; machine model files are never overwritten: choose another name or remove it")
    if not path.parent.resolve().is_dir():
        raise UsageError(f"cannot write {path}: directory {path.parent} does not exist")
    write_text(path, model.to_json())
    return path


# ---------------------------------------------------------------- loading


def _number(value, key):
    """null stands for NaN; a number must be finite (the writer writes null, never NaN or an infinity)."""
    if value is None:
        return math.nan
    x = float(value)
    if isinstance(value, bool) or not math.isfinite(x):
        raise ValueError(f"'{key}' is {value}, not a finite number or null")
    return x


def _estimate(doc):
    if doc is None:
        return None
    num = {k: _number(doc.get(k), k) for k in ("point", "stderr", "level", "low", "high")}
    return Estimate(num["point"], num["stderr"], num["level"], num["low"], num["high"], str(doc.get("method", "")))


def _pairs(rows):
    return [(int(size), _estimate(est)) for size, est in rows]


def _load_v1(doc) -> MachineModel:
    tables = {}
    for k, v in (doc.get("tables") or {}).items():
        tables[k] = _pairs(v) if isinstance(v, list) else {q: _pairs(rows) for q, rows in v.items()}
    one_sided = {
        mode: {"latency": _pairs(v.get("latency", [])), "gap": _pairs(v.get("gap", [])), "G": _estimate(v.get("G"))}
        for mode, v in (doc.get("one_sided") or {}).items()
    }
    return MachineModel(
        1,
        str(doc.get("created", "")),
        dict(doc.get("source") or {}),
        doc.get("base_size"),
        {n: _estimate((doc.get("params") or {}).get(n)) for n in PARAM_NAMES},
        tables,
        one_sided,
        list(doc.get("flags") or []),
        list(doc.get("notes") or []),
    )


_LOADERS = {1: _load_v1}


def load(path) -> MachineModel:
    """Reads a machine model file; branches on its schema version."""
    from mpiscope.common.inputs import MODEL_LIMIT, read_json

    path = Path(path)
    doc = read_json(path, MODEL_LIMIT, "machine model", "give what `mpiscope loggp --save` writes")
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise UsageError(f'{path} is not an mpiscope machine model (no "format": "{FORMAT}")')
    version = doc.get("schema_version")
    loader = _LOADERS.get(version)
    if loader is None:
        raise UsageError(
            f"{path} has machine model schema version {version!r}, which this mpiscope "
            f"does not read (it reads {', '.join(map(str, _LOADERS))}); use the mpiscope "
            "that wrote it"
        )
    try:
        return loader(doc)
    except (ValueError, TypeError, KeyError, AttributeError, OverflowError) as e:
        raise UsageError(
            f"machine model {path} is damaged: {str(e)[:200]}; write it again with `mpiscope loggp --save`"
        ) from None
