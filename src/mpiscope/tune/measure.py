# SPDX-License-Identifier: BSD-3-Clause
"""Measuring collectives with one algorithm forced per collective, through
the engine's MPI-library benchmarks and stopping rule (measure/runner.py):
launch k forces each collective's k-th algorithm by the library's settings
(mpilibs: forcing), launch 0 none (the default); where forcing one collective
changes another (mpilibs: forces_alone), one launch per collective. Rounds
repeat interleaved, samples kept per launch; every launch is a stored run.
Launches is how measurements and verifications launch the engine (a test
serves stored samples in its place, tests/tune_replay.py); Measured is what
one communicator size has measured. Method: docs/explanation/tuner.md."""

from __future__ import annotations

import dataclasses
import sys

from mpiscope import mpilibs
from mpiscope.mpilibs.algorithm_catalog import DEFAULT, Catalog
from mpiscope.tune.cell_samples import TUNED, Samples


def forcing_args(catalog: Catalog, forced: dict, extra: dict | None = None, plain: bool = False) -> list:
    """Launcher words forcing {collective: Algorithm or None}; `extra` are more
    settings (the files') as name -> value. `plain`: nothing at all, the
    library exactly as a user gets it (the baseline of the verification)."""
    if plain:
        return []
    library = mpilibs.get(catalog.library)
    return library.settings_words({**library.forcing(catalog, forced), **(extra or {})})


def together(names: dict, alone: bool) -> list:
    """The launches of {collective: name or DEFAULT} forced at once: one,
    or, where forcing one collective changes another's (mpilibs:
    forces_alone), one per forced collective and one for the defaults."""
    if not names:
        return []
    if not alone:
        return [names]
    defaults = {c: n for c, n in names.items() if n in (DEFAULT, TUNED)}
    return ([defaults] if defaults else []) + [{c: n} for c, n in names.items() if c not in defaults]


def launch_timeout(plan, benches, sizes) -> float:
    """How long a launch may take: start-up, and every series stopped by its
    time budget, three times over. A forced algorithm that never returns
    (MPICH's nonblocking-based allgather hung on an emulated cluster) ends
    its launch instead of the tune."""
    return 120.0 + 3 * len(benches) * len(sizes) * (plan.time_budget + 0.5)


class Launches:
    """The tune's launches of the engine for one library (`catalog`)."""

    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def launch(
        self,
        plan,
        cells: dict,
        label: str,
        samples: Samples,
        names: dict,
        extra: dict | None = None,
        plain: bool = False,
    ):
        """One run of `plan`: `cells` {collective: sizes}, `names` {collective:
        algorithm name or DEFAULT or TUNED}. Its samples go into `samples`
        under those names."""
        from mpiscope.measure import runner
        from mpiscope.store.ingest import load
        from mpiscope.store.series import all_series_samples

        forced = {c: (None if names[c] in (DEFAULT, TUNED) else self.catalog.find(c, names[c])) for c in cells}
        sizes = sorted({s for c, ss in cells.items() if c != "barrier" for s in ss}) or [0]
        benches = list(cells)
        p = dataclasses.replace(
            plan,
            benches=benches,
            sizes=sizes,
            sizeless=[b for b in benches if b == "barrier"],
            launcher_args=list(plan.launcher_args) + forcing_args(self.catalog, forced, extra, plain),
            label=None,
            launch_timeout=launch_timeout(plan, benches, sizes),
        )
        run_dir, context = runner.run(p, [sys.argv[0], "tune", label])
        samples.runs.append(context["run_id"])
        launch_id = len(samples.runs)
        if context["status"] != "completed":
            samples.failures.append((label, context.get("error")))
        table, run = load(run_dir)
        for bench, _algo, size, s in all_series_samples(table, run):
            if bench in cells and (bench == "barrier" or size in cells[bench]):
                samples.add(bench, names[bench], 0 if bench == "barrier" else int(size), s.values, launch_id)
        return run_dir

    def measure(self, plan, jobs: dict, samples: Samples, repeat: int = 1, say=print):
        """`jobs` {collective: [(name, sizes)], DEFAULT first}: launch k forces the
        k-th name of every collective that has one, at that name's sizes."""
        rounds = max((len(v) for v in jobs.values()), default=0)
        alone = mpilibs.get(self.catalog.library).forces_alone
        for rep in range(repeat):
            for k in range(rounds):
                in_launch = {c: jobs[c][k][1] for c in jobs if k < len(jobs[c]) and jobs[c][k][1]}
                names = {c: jobs[c][k][0] for c in in_launch}
                for group in together(names, alone):
                    cells = {c: in_launch[c] for c in group}
                    label = ", ".join(f"{c}={n}" for c, n in group.items())
                    say(f"[{rep * rounds + k + 1}/{rounds * repeat}] {label}")
                    failed = len(samples.failures)
                    self.launch(plan, cells, label, samples, group)
                    if len(samples.failures) > failed and len(cells) > 1:
                        # A forced algorithm that cannot run ends the launch (MPICH: fallback
                        # = error): the collectives it left unmeasured get a launch each.
                        for c, sizes in cells.items():
                            missing = [s for s in sizes if not len(samples.get(c, group[c], s))]
                            if missing:
                                say(f"  again alone: {c}={group[c]}")
                                self.launch(plan, {c: missing}, f"{c}={group[c]}", samples, {c: group[c]})


class Measured:
    """What one communicator size has measured: the samples, and per
    collective the (size, name) cells that have them. A cell whose code
    another configuration runs there (`launches_of`, tune/readings.py) is
    that one's cell: launched once, and the launches are both's."""

    def __init__(self, plan, names: dict, launches: Launches, repeat: int, say=print):
        self.plan, self.names, self.launches, self.repeat, self.say = plan, names, launches, repeat, say
        self.samples = Samples()
        self.cells = {c: set() for c in names}  # (size, name) cells with samples
        self.inferred = {c: set() for c in names}  # (size, name) cells given another's launches
        self.launches_of = {}  # {(collective, size, name): the configuration whose launches are name's}

    def measure(self, jobs: dict):
        """jobs {collective: {name: sizes}}, measured in the order of self.names."""
        wanted = {}
        for c, by in jobs.items():
            for n, sizes in by.items():
                for s in sizes:
                    r = self.launches_of.get((c, s, n), n)
                    if (s, r) not in self.cells[c]:
                        wanted.setdefault(c, {}).setdefault(r, set()).add(s)
        ordered = {c: [(n, sorted(by[n])) for n in self.names[c] if n in by] for c, by in wanted.items()}
        self.launches.measure(self.plan, ordered, self.samples, self.repeat, self.say)
        for c, pairs in ordered.items():
            for n, sizes in pairs:
                self.cells[c] |= {(s, n) for s in sizes}
        for (c, s, n), r in self.launches_of.items():
            if c in self.cells and n in self.names[c] and (s, r) in self.cells[c] and (s, n) not in self.cells[c]:
                for launch_id, values in self.samples.values.get((c, r, s), []):
                    self.samples.add(c, n, s, values, launch_id)
                self.cells[c].add((s, n))
                self.inferred[c].add((s, n))

    def sizes_with(self, coll, name) -> list:
        """The sizes at which `name` has samples."""
        return [s for s, m in self.cells[coll] if m == name]
