# SPDX-License-Identifier: BSD-3-Clause
"""An app run's context.json and app.json checked as they are read back
(app/app_run.py): what `mpiscope app compare` writes there, and nothing it
never writes (a context of another kind of run, a NaN count, a negative
median). A damaged file is refused naming it (UsageError, exit 2)."""

from __future__ import annotations

import math

from mpiscope.common.errors import UsageError
from mpiscope.store.checks import RESTORE, version, whole

ANSWER_FIX = "delete it: the answer is then computed again from launches.parquet"


def _number(value, low=-math.inf, high=math.inf, open_low=False) -> bool:
    return (
        isinstance(value, (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and (value > low if open_low else value >= low)
        and value <= high
    )


def _refuse(path, problem, hint):
    raise UsageError(f"{path} is damaged: {problem}; {hint}")


def context(doc, path) -> dict:
    """The context of an app run: its configurations, baseline and options."""
    configs = doc.get("configs")
    if (
        not isinstance(configs, list)
        or not configs
        or not all(isinstance(c, dict) and isinstance(c.get("name"), str) for c in configs)
    ):
        _refuse(
            path,
            "it says the run is an app run but lists no configurations (a run of another kind, or a damaged context)",
            RESTORE,
        )
    if doc.get("baseline") not in [c["name"] for c in configs]:
        _refuse(path, f"its baseline {str(doc.get('baseline'))[:40]!r} is none of its configurations", RESTORE)
    options = doc.get("options")
    checks = {
        "noise": lambda x: _number(x, 0),
        "alpha": lambda x: _number(x, 0, 1, True),
        "level": lambda x: _number(x, 0, 1, True),
        "seed": lambda x: whole(x, 0),
        "n_boot": lambda x: whole(x, 1),
        "warmup": lambda x: x is None or whole(x, 0),
    }
    if not isinstance(options, dict):
        _refuse(path, "it holds no options of the comparison", RESTORE)
    for key, ok in checks.items():
        if not ok(options.get(key)):
            _refuse(path, f"options.{key} is {str(options.get(key))[:40]}, a value `app compare` never takes", RESTORE)
    return doc


def answer(doc, path) -> dict:
    """app.json: the counts, medians and speedups of the answer."""
    from mpiscope.store.layout import SCHEMA_VERSION

    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        _refuse(path, "it holds no answer (no results)", ANSWER_FIX)
    version(doc, path, SCHEMA_VERSION, "app answer", ANSWER_FIX)
    for key in ("rounds", "launches"):
        if not whole(doc.get(key)):
            _refuse(path, f"'{key}' is {str(doc.get(key))[:40]}, not a count", ANSWER_FIX)
    for k, r in enumerate(doc["results"]):
        problem = _result_problem(r)
        if problem:
            _refuse(path, f"results.{k} {problem}", ANSWER_FIX)
    return doc


def _no_launch(r) -> bool:
    """A configuration none of whose launches counted has no median: NaN, as compare writes it."""
    m = r["median"]
    return r.get("n") == 0 and isinstance(m, float) and math.isnan(m)


def _result_problem(r) -> str | None:
    if not isinstance(r, dict) or not isinstance(r.get("config"), str):
        return "names no configuration"
    for key in ("n", "launches", "failed", "metric_missing"):
        if key in r and not whole(r[key]):
            return f"has {key} = {str(r[key])[:40]}, not a count"
    if r.get("median") is not None and not _number(r["median"], 0) and not _no_launch(r):
        return f"has a median of {str(r['median'])[:40]}"
    if r.get("p_value") is not None and not _number(r["p_value"], 0, 1):
        return f"has a p-value of {str(r['p_value'])[:40]}"
    s = r.get("speedup")
    if s is not None and not (
        isinstance(s, dict)
        and _number(s.get("point"), 0, open_low=True)
        and all(s.get(k) is None or _number(s[k], 0) for k in ("low", "high"))
    ):
        return "has a speedup that is no positive number"
    return None
