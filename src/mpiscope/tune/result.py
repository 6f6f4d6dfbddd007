# SPDX-License-Identifier: BSD-3-Clause
"""What a tune found, as tune.json holds it (docs/schemas/tune.schema.json):
every communicator size's cells, decisions, rules, files and verification,
and the change-over points measured, predicted by the cost models and
read from the library's default."""

from __future__ import annotations


from mpiscope import mpilibs
from mpiscope.mpilibs.algorithm_catalog import DEFAULT
from mpiscope.tune import verdicts as V
from mpiscope.tune.library_sizes import describe
from mpiscope.tune.weights import weighted


def result(tuning, table, costs, written, verification, vruns, vfailures) -> dict:
    """The document of `tuning` (tuner.Tuning) after its last verification."""
    cat, cfg, ts = tuning.catalog, tuning.cfg, tuning.tuners
    judged = [r for r in verification if r.get("speedup")]
    in_effect = V.file_in_effect(verification)
    by_debugger = any(r.get("library_selects") for r in verification)
    counts = [t.cell_counts() for t in ts]
    return {
        "library": cat.library,
        "version": cat.version,
        "p": ts[0].p,
        "ps": [t.p for t in ts],
        "ppn": ts[0].plan.ppn,
        "cluster": ts[0].plan.cluster,
        "algorithms": cat.to_dict()["algorithms"],
        "excluded_components": cat.excluded_components,
        "sizes": {c: describe(tuning.library, c) for c in cfg.collectives},
        "search": cfg.search if cfg.adaptive else "exhaustive",
        # the guided search's pingpong launch, where it measured its costs itself
        **({"costs_run": tuning.costs_run} if tuning.costs_run else {}),
        "cells": {
            k: sum(x[k] for x in counts)
            for k in ("measured", "exhaustive", "same_as_default", "same_code", "skipped_by_models", "out_of_reach")
        },
        "default_runs": [
            {"collective": c, "p": t.p, "size": s, "algorithm": n, "as_forced": exact}
            for t in ts
            for (c, s), (n, exact) in sorted(t.reading.default_runs.items())
        ],
        "runs_as": [
            {"collective": c, "p": t.p, "size": s, "algorithm": n, "runs": r}
            for t in ts
            for (c, s, n), r in sorted(t.reading.runs_as.items())
        ],
        "model_fits": [
            {
                "p": t.p,
                "collective": c,
                "algorithm": n,
                "at_size": s,
                "model": f.model,
                "alpha_s": f.alpha,
                "beta_s_per_byte": f.beta,
                "max_relative_residual": f.residual,
                "left_out": (s, n) in t.searcher.model_skipped[c],
            }
            for t in ts
            for c, by in t.searcher.fits.items()
            for n, fs in by.items()
            for s, f in fs
        ],
        "decisions": [
            {
                "collective": c,
                "p": t.p,
                "size": s,
                "winner": t.decisions.winners.get((c, s), DEFAULT),
                "measured": (c, s) in t.decisions.rows,
                "rows": t.decisions.rows.get((c, s), []),
            }
            for c in cfg.collectives
            for t in ts
            for s in cfg.sizes_of(c)
        ],
        "rules": {
            c: {str(p): [{"start": r.start, "algorithm": r.algorithm} for r in rs] for p, rs in sorted(by_p.items())}
            for c, by_p in table.items()
        },
        "bound": {"max_rules": cfg.max_rules, "cost": costs},
        "files": {k: str(v) for k, v in written.items()},
        "env": str(tuning.outdir / "env.sh"),
        "verification": {
            "cells": verification,
            "geomean_speedup": V.geomean(r["speedup"] for r in judged),
            "slower_beyond_noise": [r for r in verification if r.get("verdict") == "tuned slower"],
            "file_in_effect": in_effect,
            "last_withdrawal_verified": not tuning.unverified,
            "checked_by": "gdb" if by_debugger else "time",
            "disturbed_launches": [d for t in ts for d in t.verification.disturbed],
            "runs": vruns,
            "failures": vfailures,
        },
        "withdrawn": [{"p": t.p, **w} for t in ts for w in t.decisions.withdrawn],
        "kept_by_library": [{"p": t.p, "collective": c, "size": s} for t in ts for c, s in sorted(t.left.items())],
        "weights_left_out": list(cfg.weights_left_out),
        "weighted": weighted(cfg.weights, verification, [t.p for t in ts]),
        "changeovers": changeovers(ts, cat, cfg.machine),
        "own_algorithms": [{"p": t.p, **x} for t in ts for x in t.own],
        "runs": [r for t in ts for r in t.measured.samples.runs],
        "failures": [f for t in ts for f in t.measured.samples.failures],
    }


def changeovers(tuners, catalog, machine):
    """Per collective and communicator size: the measured change-over sizes;
    with cost-model parameters, the change-overs the models predict among the
    same algorithms; where it was read, the library default's own (default_runs).
    {coll: {"by_p": {"p": {"measured": […], "model": […], "library": […]}}}}."""
    out = {}
    for c in tuners[0].cfg.collectives:
        if c == "barrier":
            continue
        by_p = {}
        for t in tuners:
            winners, default_runs = t.decisions.winners, t.reading.default_runs
            seq = [(s, winners.get((c, s), DEFAULT)) for s in t.cfg.sizes]
            entry = {
                "measured": [{"size": b[0], "from": a[1], "to": b[1]} for a, b in zip(seq, seq[1:]) if a[1] != b[1]]
            }
            runs = [(s, default_runs[(c, s)][0]) for s in t.cfg.sizes if (c, s) in default_runs]
            if runs:  # the library's own, read under gdb
                entry["library"] = [
                    {"size": b[0], "from": a[1], "to": b[1]} for a, b in zip(runs, runs[1:]) if a[1] != b[1]
                ]
            if machine is not None:
                entry["model"] = _model_changeovers(c, t.p, t.cfg.sizes, catalog, machine)
            by_p[str(t.p)] = entry
        out[c] = {"by_p": by_p}
    return out


def _model_changeovers(coll, p, sizes, catalog, machine):
    from mpiscope.models.costmodels import find, predict_time

    costs = machine.hockney_costs()
    models = mpilibs.get(catalog.library).model_names
    names = {models[n]: n for n in catalog.names(coll) if n in models and find(coll, models[n])}
    if costs is None or len(names) < 2:
        return None
    seq = []
    for s in sizes:
        best = min(names, key=lambda m: predict_time(coll, m, s, p, costs))
        seq.append((s, names[best]))
    return [{"size": b[0], "from": a[1], "to": b[1]} for a, b in zip(seq, seq[1:]) if a[1] != b[1]]
