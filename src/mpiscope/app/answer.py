# SPDX-License-Identifier: BSD-3-Clause
"""The answer of an app run from its launches: per configuration the
launches that count and those that do not, the median, the speedup against
the baseline with its interval and verdict (stats/speedup.py); and every
launch that does not count, named. Warm-up launches are not counted; a
failed warm-up launch is named all the same."""

from __future__ import annotations

from mpiscope.app.launch import FAILED, METRIC_MISSING, OK
from mpiscope.stats.speedup import speedups


def valid_values(launches, names, with_metric: bool) -> dict:
    """{configuration: the values of its counted, valid launches}, in `names`' order."""
    values = {n: [] for n in names}
    for x in launches:
        if not x["warmup"] and x["status"] == OK and x["config"] in values:
            values[x["config"]].append(x["metric"] if with_metric else x["wall_s"])
    return values


def summarize(launches, configs, baseline: str, options: dict, with_metric: bool) -> dict:
    """{"rounds", "launches", "results", "failed_launches"}: `launches` as
    stored (dicts, in order), `configs` the names in order, `options` the
    statistics' (noise, alpha, level, seed, n_boot)."""
    values = valid_values(launches, configs, with_metric)
    stats = speedups(
        values,
        baseline,
        noise=options["noise"],
        alpha=options["alpha"],
        level=options["level"],
        seed=options["seed"],
        n_boot=options["n_boot"],
    )
    results = []
    for s in stats:
        mine = [x for x in launches if x["config"] == s.config and not x["warmup"]]
        results.append(
            {
                **s.to_dict(),
                "launches": len(mine),
                "failed": sum(x["status"] == FAILED for x in mine),
                "metric_missing": sum(x["status"] == METRIC_MISSING for x in mine),
            }
        )
    failed = [
        {k: x[k] for k in ("index", "config", "round", "warmup", "status", "exit_code", "reason")}
        for x in launches
        if x["status"] != OK
    ]
    return {
        "rounds": len({x["round"] for x in launches if not x["warmup"]}),
        "launches": len(launches),
        "results": results,
        "failed_launches": failed,
    }
