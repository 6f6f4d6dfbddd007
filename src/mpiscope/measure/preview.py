# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope run --dry-run`: the launcher command lines exactly as they would
run, the planned series and an estimate of the wall time. Nothing is
started and nothing is written (the run directory named is not created).
"""

from __future__ import annotations

import json
import os
import shlex

from mpiscope.engine.build import ensure_engine
from mpiscope.measure import benchmarks, runner
from mpiscope.measure.algo_options import variant_counts as algo_variants
from mpiscope.measure.loggp_options import variant_counts as loggp_variants

# Start-up of one launch: the launcher, MPI_Init, timer calibration and clock
# synchronization; a few seconds on one machine, more across many hosts.
STARTUP_S = 5.0


def launches(plan):
    """[(env settings the launch adds, argv)] of every launch of the plan,
    under the run directory a real run would build now."""
    engine = ensure_engine(plan.installation())
    run_dir = plan.out / f".{runner.new_run_id()}.partial"
    out = []
    for k in range(plan.launches):
        argv, env, _ = runner.launch_spec(plan, engine, run_dir, k)
        added = {key: value for key, value in env.items() if os.environ.get(key) != value}
        out.append((added, [str(a) for a in argv]))
    return run_dir, out


def series(plan):
    """{bench: series per launch} (sizes x variants)."""
    variants = {**loggp_variants(plan), **algo_variants(plan)}
    return {b: benchmarks.series_count([b], plan.sizes, plan.sizeless, variants) for b in plan.benches}


def method_series(plan):
    """{bench: method series per launch} (--methods: the tools' and the references')."""
    per_size = getattr(plan, "method_series", None) or {}
    return {b: benchmarks.series_count([b], plan.sizes, plan.sizeless, per_size) for b in per_size if per_size[b]}


def refine_series(plan):
    """Series refinement may add at most (each in a launch of its own)."""
    if not plan.refine:
        return 0
    variants = {**loggp_variants(plan), **algo_variants(plan)}
    curves = [b for b in plan.benches if b not in plan.sizeless]
    return benchmarks.series_count(curves, range(plan.refine_max), (), variants)


def wall_time(plan):
    """An upper estimate in seconds: every series stopped by --time-budget,
    plus the start-up of every launch (refinement's too)."""
    n = plan.series_count() * plan.launches + refine_series(plan)
    started = plan.launches + (runner.REFINE_ROUNDS * len(plan.benches) if plan.refine else 0)
    return n * plan.time_budget + started * STARTUP_S


def as_dict(plan):
    run_dir, cmds = launches(plan)
    per_bench = series(plan)
    return {
        "run_directory": str(run_dir),
        "launches": [{"env": env, "argv": argv, "shell": _shell(env, argv)} for env, argv in cmds],
        "hostfile": plan.hostfile_text(),
        "series_per_launch": per_bench,
        "series": sum(per_bench.values()) * plan.launches,
        "refine_series_max": refine_series(plan),
        # --methods: the peers' and the reference series, per launch
        "method_series_per_launch": method_series(plan),
        "wall_time_max_s": wall_time(plan),
        "notes": list(plan.notes),
    }


def as_json(plan):
    return json.dumps(as_dict(plan), indent=2)


def as_text(plan):
    d = as_dict(plan)
    lines = [f"launch {k}: {x['shell']}" for k, x in enumerate(d["launches"])]
    if d["hostfile"] is not None:
        lines += [
            f"hostfile (written to the run directory as {runner.HOSTFILE}):",
            *("  " + line for line in d["hostfile"].splitlines()),
        ]
    sizes = len(plan.sizes)
    lines.append(
        f"series: {d['series']} = {plan.launches} launch(es) x {sum(d['series_per_launch'].values())} per launch"
    )
    for bench, n in d["series_per_launch"].items():
        shape = "sizeless" if bench in plan.sizeless else f"{sizes} size(s)"
        lines.append(f"  {bench}: {n} ({shape}, {n // (1 if bench in plan.sizeless else sizes)} variant(s))")
    if d["method_series_per_launch"]:
        lines.append(
            f"methods: {', '.join(plan.method_engine)}: "
            f"{sum(d['method_series_per_launch'].values())} more series per launch"
        )
    if d["refine_series_max"]:
        lines.append(f"refinement: at most {d['refine_series_max']} more series")
    lines.append(
        f"wall time: at most about {_hms(d['wall_time_max_s'])} (every series stopped by "
        f"--time-budget {plan.time_budget:g} s, plus {STARTUP_S:g} s start-up a launch); "
        f"series that reach --ci-width or --reps-max stop sooner"
    )
    lines += [f"note: {n}" for n in d["notes"]]
    lines.append(f"nothing was run (--dry-run); a run would be stored under {plan.out}")
    return "\n".join(lines)


def _shell(env, argv):
    return shlex.join([f"{k}={v}" for k, v in env.items()] + argv)


def _hms(seconds):
    seconds = int(round(seconds))
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
