# SPDX-License-Identifier: BSD-3-Clause
"""Our own algorithms (native/engine/colls/) against the library's: where the best
of ours beats every algorithm the library offers at a cell (compare's
verdict against the library's best median), by how much."""

from __future__ import annotations

import sys

import numpy as np

from mpiscope.stats.compare import compare_samples


def own_algorithms(own_plan, samples, names: dict, rng, noise: float, alpha: float, say=print) -> list:
    """`own_plan`: a run of our own algorithms at every size (--algo all), or
    None; `samples`: the tune's (the run's id is added to its runs), `names`
    {coll: the library's algorithms measured, DEFAULT first}."""
    if own_plan is None or not own_plan.benches:
        return []
    from mpiscope.measure import runner
    from mpiscope.store.ingest import load
    from mpiscope.store.series import all_series_samples

    say(f"our own algorithms: {', '.join(own_plan.benches)}")
    run_dir, context = runner.run(own_plan, [sys.argv[0], "tune", "own algorithms"])
    samples.runs.append(context["run_id"])
    table, run = load(run_dir)
    own = {}
    for bench, algo, size, smp in all_series_samples(table, run):
        if algo not in (None, "mpi") and len(smp.values):
            own.setdefault((bench, int(size)), {})[algo] = smp.values
    out = []
    for (coll, size), algs in sorted(own.items()):
        lib = {n: samples.get(coll, n, size) for n in names.get(coll, [])}
        lib = {n: v for n, v in lib.items() if len(v)}
        if not lib:
            continue
        best_lib = min(lib, key=lambda n: float(np.median(lib[n])))
        best_own = min(algs, key=lambda n: float(np.median(algs[n])))
        ratio, p, verdict, _ = compare_samples(
            lib[best_lib], algs[best_own], rng, noise=noise, alpha=alpha, n_boot=1000
        )
        out.append(
            {
                "collective": coll,
                "size": size,
                "best_library": best_lib,
                "best_own": best_own,
                "speedup": 1.0 / ratio.point,
                "speedup_low": 1.0 / ratio.high,
                "speedup_high": 1.0 / ratio.low,
                "own_beats_library": verdict == "faster",
            }
        )
    return out
