"""Measuring collectives with one algorithm forced per collective, through the
engine's own MPI-library benchmarks and stopping rule (measure/runner.py).

One launch forces, for every collective in it, one algorithm (Open MPI: MCA
parameters on the launcher's command line; MPICH: control variables through
hydra's -genv, the device layer's collectives off); launch k forces each
collective's k-th algorithm, launch 0 none (the library's default). A round
of launches repeats `repeat` times, interleaved, so slow drift of the
machine falls on every algorithm alike; a cell's samples are kept per
launch, as a launch shifts all its times together. Every launch is a stored run (under the tune's own output
root), readable with `mpiscope show --out DIR/runs`.
"""

from __future__ import annotations

import dataclasses
import sys

import numpy as np

from mpiscope.measure import runner
from mpiscope.store.ingest import load
from mpiscope.store.series import all_series_samples
from mpiscope.tune.discover import DEFAULT, Catalog, mpich_env, ompi_mca

TUNED = "tuned"  # the library with the rules file written


def forcing_args(catalog: Catalog, forced: dict, extra: dict | None = None,
                 plain: bool = False) -> list:
    """Launcher words forcing {collective: Algorithm or None}; `extra` are more
    parameters (the rules file's) as name -> value. `plain`: nothing at all,
    the library exactly as a user gets it (the baseline of the verification)."""
    words = []
    if plain:
        return words
    if catalog.library == "openmpi":
        params = {}
        for coll, alg in forced.items():
            params.update(ompi_mca(coll, alg))
        if catalog.excluded_components:
            params["coll"] = "^" + ",".join(catalog.excluded_components)
        params.update(extra or {})
        for k, v in params.items():
            words += ["--mca", k, v]
    else:
        env = {}
        for coll, alg in forced.items():
            env.update(mpich_env(coll, alg))
        if not catalog.device_override:
            env.pop("MPIR_CVAR_DEVICE_COLLECTIVES", None)
        env.update(extra or {})
        for k, v in env.items():
            words += ["-genv", k, v]
    return words


def forcing_mca(catalog: Catalog, forced: dict) -> dict:
    """Open MPI: forcing_args as {MCA parameter: value}."""
    words = forcing_args(catalog, forced)
    return {words[i + 1]: words[i + 2] for i in range(0, len(words), 3)}


@dataclasses.dataclass
class Samples:
    """Samples per (collective, algorithm name or DEFAULT, engine size), kept
    per launch: the launch is the unit of the decisions (stats/launch_compare)."""
    values: dict = dataclasses.field(default_factory=dict)      # key -> [(launch id, array)]
    runs: list = dataclasses.field(default_factory=list)        # run ids, in launch order
    failures: list = dataclasses.field(default_factory=list)    # (what was forced, message)
    _next: int = 0                                              # launch ids for adds without one

    def add(self, coll, alg, size, vals, launch=None):
        """`launch`: the launch the values come from (None: a launch of their own)."""
        if launch is None:
            self._next -= 1
            launch = self._next
        self.values.setdefault((coll, alg, size), []).append((launch, np.asarray(vals, dtype=float)))

    def drop_launch(self, launch):
        """Sets a launch's samples aside (a launch disturbed by other work)."""
        for key in list(self.values):
            self.values[key] = [(k, v) for k, v in self.values[key] if k != launch]

    def get(self, coll, alg, size):
        """Every launch's samples pooled."""
        parts = [v for _, v in self.values.get((coll, alg, size), [])]
        return np.concatenate(parts) if parts else np.empty(0)

    def launches(self, coll, alg, size) -> list:
        """One array per launch, in launch order."""
        by = {}
        for k, v in self.values.get((coll, alg, size), []):
            by[k] = np.concatenate([by[k], v]) if k in by else v
        return list(by.values())

    def groups_at(self, coll, size) -> list:
        """Every algorithm's launches at one cell (the launch variance's pool)."""
        return [self.launches(*key) for key in self.values if key[0] == coll and key[2] == size]

    def median(self, coll, alg, size):
        v = self.get(coll, alg, size)
        return float(np.median(v)) if len(v) else None


def launch_timeout(plan, benches, sizes) -> float:
    """How long a launch may take: start-up, and every series stopped by its
    time budget, three times over. A forced algorithm that never returns
    (MPICH's nonblocking-based allgather hung on an emulated cluster) ends
    its launch instead of the tune."""
    return 120.0 + 3 * len(benches) * len(sizes) * (plan.time_budget + 0.5)


def launch(plan, catalog: Catalog, cells: dict, label: str, samples: Samples,
           names: dict, extra: dict | None = None, plain: bool = False):
    """One run: `cells` {collective: sizes}, `names` {collective: algorithm name
    or DEFAULT}. Its samples go into `samples` under those names."""
    forced = {c: (None if names[c] in (DEFAULT, TUNED) else catalog.find(c, names[c]))
              for c in cells}
    sizes = sorted({s for c, ss in cells.items() if c != "barrier" for s in ss}) or [0]
    benches = list(cells)
    p = dataclasses.replace(plan, benches=benches, sizes=sizes,
                            sizeless=[b for b in benches if b == "barrier"],
                            launcher_args=list(plan.launcher_args) + forcing_args(catalog, forced, extra,
                                                                                 plain),
                            label=None, launch_timeout=launch_timeout(plan, benches, sizes))
    run_dir, context = runner.run(p, [sys.argv[0], "tune", label])
    samples.runs.append(context["run_id"])
    launch_id = len(samples.runs)
    if context["status"] != "completed":
        samples.failures.append((label, context.get("error")))
    table, run = load(run_dir)
    for bench, _algo, size, s in all_series_samples(table, run):
        if bench in cells and (bench == "barrier" or size in cells[bench]):
            samples.add(bench, names[bench], 0 if bench == "barrier" else int(size), s.values,
                        launch_id)
    return run_dir


def measure_algorithms(plan, catalog: Catalog, cells: dict, algorithms: dict, samples: Samples,
                       repeat: int = 1, say=print):
    """Every algorithm of `algorithms` {collective: [names, DEFAULT first]} at
    the sizes of `cells` {collective: sizes}."""
    measure_jobs(plan, catalog, {c: [(n, cells[c]) for n in algorithms[c]] for c in cells},
                 samples, repeat, say)


def measure_jobs(plan, catalog: Catalog, jobs: dict, samples: Samples, repeat: int = 1, say=print):
    """`jobs` {collective: [(name, sizes)], DEFAULT first}: launch k forces the
    k-th name of every collective that has one, at that name's sizes."""
    rounds = max((len(v) for v in jobs.values()), default=0)
    for rep in range(repeat):
        for k in range(rounds):
            in_launch = {c: jobs[c][k][1] for c in jobs if k < len(jobs[c]) and jobs[c][k][1]}
            if not in_launch:
                continue
            names = {c: jobs[c][k][0] for c in in_launch}
            label = ", ".join(f"{c}={n}" for c, n in names.items())
            say(f"[{rep * rounds + k + 1}/{rounds * repeat}] {label}")
            failed = len(samples.failures)
            launch(plan, catalog, in_launch, label, samples, names)
            if len(samples.failures) > failed and len(in_launch) > 1:
                # A forced algorithm that cannot run ends the launch (MPICH: fallback
                # = error): the collectives it left unmeasured get a launch each.
                for c, sizes in in_launch.items():
                    missing = [s for s in sizes if not len(samples.get(c, names[c], s))]
                    if missing:
                        say(f"  again alone: {c}={names[c]}")
                        launch(plan, catalog, {c: missing}, f"{c}={names[c]}", samples,
                               {c: names[c]})
