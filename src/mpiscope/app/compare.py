# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope app compare`'s measurement: the application launched under
every configuration in interleaved rounds until the stopping rule says
enough (schedule.py), every launch stored as it ends (app_run.py), then the
answer (answer.py) and, with a profile and a tune, the prediction beside
it. SIGINT or SIGTERM stops the launch under way; the run is then stored
as failed, with every launch measured until then."""

from __future__ import annotations

import datetime
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from mpiscope.app.answer import summarize, valid_values
from mpiscope.app.launch import Launch, Start, run_launch
from mpiscope.app.schedule import INTERRUPTED, NO_BASELINE, NO_OTHER, StopRule, active, decide
from mpiscope.app.app_run import Writer
from mpiscope.measure.interrupts import signals_stop_the_run
from mpiscope.measure.processes import adopt_orphans
from mpiscope.measure.progress import progress
from mpiscope.stats.speedup import BASELINE, speedups

FAILED_STOPS = (INTERRUPTED, NO_BASELINE, NO_OTHER)


def measure(
    start: Start,
    configs: list,
    rule: StopRule,
    options: dict,
    *,
    out: Path,
    context: dict,
    metric: re.Pattern | None = None,
    timeout: float | None = None,
    predicting=None,
    scaling=None,
) -> Path:
    """Measures and stores an app run; returns its directory. `options`: the
    statistics' (noise, alpha, level, seed, n_boot); `context`: what the
    run's context.json starts with (run_id, configs, …); `predicting`:
    answer -> the prediction's document, or None; `scaling`: () -> the
    what-if's document, or None."""
    writer = Writer(out, context)
    started = time.time()
    adopt_orphans()
    stop, error = None, None
    with signals_stop_the_run() as signals:
        try:
            start.build(writer.dir)
            stop = _rounds(start, configs, rule, options, writer, metric, timeout)
        except KeyboardInterrupt as exc:
            stop = INTERRUPTED
            error = (
                f"interrupted ({exc.args[0] if exc.args else 'SIGINT'}): the launch under way was "
                f"stopped; the launches before it are stored"
            )
        except BaseException as exc:
            signals.storing = True
            writer.finish(
                _answer(writer, configs, options, context, None),
                duration_s=round(time.time() - started, 3),
                error=f"mpiscope stopped: {exc!r}; the launches before it are stored",
                launch_command=start.argv,
            )
            raise
        signals.storing = True
        answer = _answer(writer, configs, options, context, stop)
        if predicting is not None and stop != INTERRUPTED:
            answer["prediction"] = predicting(answer)
        if scaling is not None and stop != INTERRUPTED:
            answer["whatif"] = scaling()
        failed = stop in FAILED_STOPS
        return writer.finish(
            answer,
            status="failed" if failed else "completed",
            error=error or (rule.describe(stop) if failed else None),
            stop=stop,
            duration_s=round(time.time() - started, 3),
            launch_command=start.argv,
        )


def _answer(writer, configs, options, context, stop) -> dict:
    answer = summarize(
        writer.launches, [c.name for c in configs], context["baseline"], options, bool(context["value"]["metric"])
    )
    return {**answer, "stop": stop, "prediction": None, "whatif": None}


def _rounds(start, configs, rule, options, writer, metric, timeout) -> str:
    """Warm-up rounds, then counted rounds until the rule stops; returns why."""
    names = [c.name for c in configs]
    baseline = configs[0].name
    began = time.monotonic()
    with progress(len(configs) * (rule.warmup + rule.min_rounds)) as shown:

        def once(config, round_, warmup):
            x = run_launch(
                start,
                config,
                index=len(writer.launches),
                round_=round_,
                warmup=warmup,
                run_dir=writer.dir,
                metric=metric,
                timeout=timeout,
            )
            writer.add(x)
            shown.step(_progress_line(x))

        for r in range(rule.warmup):
            for c in configs:
                once(c, r + 1, True)
        todo, round_s = list(configs), []
        while True:
            t0 = time.monotonic()
            for c in todo:
                once(c, len(round_s) + 1, False)
            round_s.append(time.monotonic() - t0)
            values = valid_values(writer.launches, names, metric is not None)
            results = speedups(values, baseline, **options)
            stop = decide(rule, len(round_s), time.monotonic() - began, round_s, results, baseline)
            if stop:
                return stop
            left = active(names, baseline, len(round_s), rule, {n: len(v) for n, v in values.items()})
            todo = [c for c in configs if c.name in left]
            if len(round_s) >= rule.min_rounds:
                shown.add(len(todo))


def _progress_line(x: Launch) -> str:
    what = f"{x.config}, round {x.round}{' (warm-up)' if x.warmup else ''}: {x.wall_s:.3g} s"
    if x.metric is not None:
        what += f", metric {x.metric:g}"
    return what + ("" if x.ok else f", {x.status}: {x.reason}")


def base_context(
    *,
    run_id,
    label,
    argv,
    start: Start,
    configs,
    rule: StopRule,
    options: dict,
    metric: re.Pattern | None,
    mpi,
    timeout,
) -> dict:
    """What an app run's context.json holds from its start."""
    from mpiscope.measure.plan import relevant_env
    from mpiscope.measure.runner import git_sha

    return {
        "run_id": run_id,
        "label": label,
        "created": datetime.datetime.now().isoformat(timespec="seconds"),
        "command": list(argv),
        "application": list(start.command),
        "launch_command": start.argv,
        "mpi": mpi.launcher_family,
        "mpi_identity": mpi.identity(),
        "mpi_library": mpi.library,
        "np": start.np,
        "benches": ["app"],
        "configs": [c.to_dict() for c in configs],
        "baseline": configs[0].name,
        "value": {
            "metric": metric.pattern if metric else None,
            "what": "the metric's first group, last match" if metric else "wall time of the launch",
            "lower_is_better": True,
        },
        "options": {**options, **vars(rule), "launch_timeout_s": timeout},
        "seed": options["seed"],
        "git_sha": git_sha(),
        "env": relevant_env(),
        **start.context,
    }


def prediction_of(inputs, answer: dict, with_metric: bool, seed: int) -> dict:
    """The prediction (app/speedup_prediction.py) for configuration `inputs[0]` from a
    profile and a tune (`inputs[1:]`), beside its measured speedup. A
    prediction that fails is said, never loses the measurement."""
    name, profile, tune = inputs
    rows = {r["config"]: r for r in answer["results"]}
    base = next(r for r in answer["results"] if r["verdict"] == BASELINE)
    measured = rows[name]["speedup"]
    doc = {"config": name, "profile": profile.run_id, "tune": str(tune.directory), "measured": measured}
    try:
        from mpiscope.app.speedup_prediction import agree, explain, predict, spread_sd

        app_time = None if with_metric or base["n"] == 0 else base["median"]
        spread = spread_sd(measured["low"], measured["high"]) if measured else 0.0
        p = predict(profile, tune, app_time_s=app_time, launch_spread_sd=spread, seed=seed)
        doc.update(p.to_dict())
        if measured is not None:
            ok = agree((measured["low"], measured["high"]), p)
            doc.update({"agree": ok, "explanation": None if ok else explain(measured["point"], p).to_dict()})
    except Exception as exc:  # noqa: BLE001 - the launches are measured and must be stored
        sys.stderr.write(f"mpiscope: warning: no prediction ({exc}); the measurement is stored\n")
        doc["error"] = str(exc)
    return doc


@dataclass(frozen=True)
class WhatIfInputs:
    """What the what-if at scale of an app run needs (`--whatif-p`)."""

    trace_run: Path  # the traced profile (--profile)
    tune: Path
    ps: list
    costs_run: Path  # --from-run: its p2p benchmark gives the costs and the message times drawn
    p2p: str  # pingpong or ring
    replicates: int
    seed: int


def whatif_of(w: WhatIfInputs) -> dict:
    """The what-if (app/scale.py) with costs from the Hockney fit of the
    run's p2p benchmark, every message's time drawn from its distributions,
    and the library's eager limit on the traced run's transport; one that
    fails is said, never loses the measurement."""
    try:
        from mpiscope.app.scale import whatif
        from mpiscope.sim.measured import fitted_costs, p2p_quantiles
        from mpiscope.sim.simulate import Extras

        extras = Extras(replicates=w.replicates, seed=w.seed, dist=p2p_quantiles(w.costs_run, w.p2p))
        costs = fitted_costs(w.costs_run, w.p2p)
        return whatif(w.trace_run, w.tune, w.ps, costs, extras, library_eager=True).to_dict()
    except Exception as exc:  # noqa: BLE001 - the launches are measured and must be stored
        sys.stderr.write(f"mpiscope: warning: no what-if ({exc}); the measurement is stored\n")
        return {"failed": str(exc)}
