# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope tune`: measure, decide, write, verify (docs/explanation/tuner.md), in this order:
1. what the library offers (discover.py) and its default at each cell (read_defaults);
2. the search (adaptive.py, search.py, model_fits.py; or guided.py, sim_prior.py;
   measure.py, decide.py);
3. rules (table.py, rules.py) in the library's sizes (library_sizes.py), with
   the default's stand-ins where needed (standins.py);
4. files by the library's module, read back (write.py), and env.sh;
5. verification (verification.py, verdicts.py), withdrawing what made a cell slower.
A Tuner orders them for one size of communicator; Tuning runs one per size, writes one
file for all and verifies it (result.py: tune.json)."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mpiscope import mpilibs
from mpiscope.common.atomic import write_text
from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.algorithm_catalog import DEFAULT, Catalog
from mpiscope.mpilibs.library import Reading
from mpiscope.mpilibs.selection import Rule
from mpiscope.tune import probes, verdicts as V
from mpiscope.tune.adaptive import Search
from mpiscope.tune.decide import Decisions
from mpiscope.tune.guided import Guided
from mpiscope.tune.measure import Launches, Measured
from mpiscope.tune.own import own_algorithms
from mpiscope.tune.p2p_costs import measured_costs
from mpiscope.tune.result import result
from mpiscope.tune.sim_prior import COUNTERPARTS, simulator
from mpiscope.tune.standins import stand_ins
from mpiscope.tune.table import rules_table
from mpiscope.tune.verification import Verification
from mpiscope.tune.weights import for_comm_size, on_grid
from mpiscope.tune.write import env_lines, write_files


@dataclass(frozen=True)
class TuneConfig:
    """What to tune and how to decide: built by `mpiscope tune` from its options (cli/tune.py)."""

    collectives: list
    sizes: list  # engine sizes, the fine grid
    adaptive: bool = True
    search: str = "adaptive"  # not exhaustive: "adaptive" (adaptive.py) or "guided" (guided.py)
    sim_costs: object | None = None  # guided: the simulator's costs (sim.costs.SimCosts; None: measured, p2p_costs.py)
    coarse: int = 0  # adaptive: also every coarse-th size in the first refining pass (0: none)
    prune: float = 0.10  # margin by which an algorithm must lose at both ends to be left out
    model_prune: float | None = 0.25  # cost-model margin to leave an algorithm out (None: off)
    noise: float = 0.02
    alpha: float = 0.05
    max_rules: int = 8
    repeat: int = 3  # rounds of the measurement launches (>= 2: launch-level verdicts)
    verify_repeat: int = 3  # default/tuned pairs of the verification
    verify_rounds: int = 2  # verifications at most (after a withdrawal, again)
    seed: int = 1
    skip: tuple = ()  # algorithm names left out (e.g. ones that hang)
    weights: dict | None = None  # {collective: {comm size or None: {engine size: calls}}} (weights.py)
    weights_left_out: tuple = ()  # collectives of the weights file mpiscope does not tune
    machine: object | None = None  # cost-model parameters for the report

    def sizes_of(self, coll) -> list:
        """The engine sizes of a collective's cells (barrier has one, 0)."""
        return [0] if coll == "barrier" else self.sizes


def usable(catalog: Catalog, coll: str, p: int, skip=()) -> list:
    """The algorithms worth forcing on p ranks (mpilibs: runs_on)."""
    library = mpilibs.get(catalog.library)
    return [a.name for a in catalog.algorithms.get(coll, []) if a.name not in skip and library.runs_on(coll, a.name, p)]


def _per_node(plan) -> list:
    """Ranks on each node, in rank order: the emulated cluster's and -N/--ppn's
    fill each host's slots in turn, a hostfile's its hosts' slots; else all here."""
    slots = [s for _, s in plan.hosts] if plan.hosts else None
    if plan.cluster:
        from mpiscope.cluster.state import load

        slots = [load(plan.cluster)[1].spec.slots] * plan.np
    elif plan.ppn:
        slots = [plan.ppn] * plan.np
    out, left = [], plan.np
    for s in slots or [plan.np]:
        if left <= 0:
            break
        out.append(min(s, left))
        left -= out[-1]
    return out + ([left] if left > 0 else [])


class Tuner:
    """One communicator size: its parts, and the order they run in.
    `launches`: how the engine is launched (measure.Launches); `mpi`: the
    library to read under gdb where it can be (None: not)."""

    def __init__(self, plan, catalog: Catalog, cfg: TuneConfig, launches, say=print, own_plan=None, mpi=None):
        self.plan, self.catalog, self.cfg, self.say = plan, catalog, cfg, say
        self.own_plan, self.mpi = own_plan, mpi  # own_plan: the engine's own algorithms, or None
        self.library = mpilibs.get(catalog.library)
        self.p = plan.np
        self.rng = np.random.default_rng(cfg.seed)
        self.names = {c: [DEFAULT] + usable(catalog, c, self.p, cfg.skip) for c in cfg.collectives}
        self.measured = Measured(plan, self.names, launches, cfg.repeat, say)
        self.decisions = Decisions(self.measured, self.rng, cfg.noise, cfg.alpha)
        searcher = Guided if cfg.adaptive and cfg.search == "guided" else Search
        self.searcher = searcher(cfg, self.measured, self.decisions, say, self.library.model_names)
        if isinstance(self.searcher, Guided):
            self.searcher.counterparts = COUNTERPARTS.get(catalog.library, {})
        self.verification = Verification(
            plan, catalog, self.library, cfg, launches, self.rng, self.measured.samples, say, mpi
        )
        self.reading = Reading({}, {})  # what the default runs (read_defaults)
        self.own = []  # our own algorithms against the library's
        self.left = {}  # collectives left to the library (standins.py)
        self.set_weights([self.p])

    def set_weights(self, tuned: list):
        """The application's calls this communicator size answers for, on the
        size grid: {collective: {grid size: calls}} (empty without --weights)."""
        mine = for_comm_size(self.cfg.weights, self.p, tuned)
        self.weights = {c: on_grid(by, self.cfg.sizes_of(c)) for c, by in mine.items() if c in self.names}

    def read_defaults(self):
        """What the default and each algorithm run at each cell, where the
        library's own selection tree or a debugger can tell (self.reading);
        left empty where neither can."""
        lib, mpi = self.library, self.mpi
        cells = [(c, s) for c in self.cfg.collectives for s in self.cfg.sizes_of(c)]
        if mpi is not None:
            per_node = _per_node(self.plan)
            told = lib.selected_defaults(mpi, lambda target: probes.build(mpi, target), self.catalog, per_node, cells)
            if told is not None:
                self.say(f"what the default runs at each cell on {self.p} ranks, from {lib.title}'s selection tree")
                self.reading = told
                return
        if mpi is None or not lib.reads_under_gdb(mpi):
            return
        self.say(f"what the default and each algorithm run at each cell on {self.p} ranks, under gdb")
        names = {c: [n for n in ns if n != DEFAULT] for c, ns in self.names.items()}
        try:
            self.reading = lib.read_defaults(
                mpi,
                probes.build(mpi, "collcall"),
                self.catalog,
                self.p,
                cells,
                names,
                lambda forced: lib.forcing(self.catalog, forced),
                self.say,
            )
        except (subprocess.TimeoutExpired, UsageError) as e:
            self.say(f"the default's algorithm could not be read under gdb ({e}): every cell is measured")

    def search(self):
        self.searcher.run(self.weights, self.reading)

    def own_algorithms(self):
        self.own = own_algorithms(
            self.own_plan, self.measured.samples, self.names, self.rng, self.cfg.noise, self.cfg.alpha, self.say
        )

    def table(self):
        """{coll: {p: rules}} in the library's sizes, and the bound's cost per
        collective; where the library cannot keep its own choice beside rules
        (standins.py), its stand-ins, and the collectives left to it in
        self.left {coll: size}."""
        winners = self.decisions.winners
        if not self.library.keeps_default:
            winners, self.left = stand_ins(self.cfg, winners, self.reading.default_runs, self.decisions.withdrawn)
        return rules_table(
            self.library,
            self.p,
            self.cfg,
            self.names,
            winners,
            self.measured.samples,
            self.weights if self.cfg.weights else None,
        )

    def verify(self, table, written):
        return self.verification.run(table, written)

    def withdraw(self, cells) -> bool:
        return self.decisions.withdraw(cells)

    def cell_counts(self):
        cfg, m, s = self.cfg, self.measured, self.searcher
        exhaustive = sum(len(cfg.sizes_of(c)) * len(self.names[c]) for c in cfg.collectives)
        return {
            "measured": sum(len(v - m.inferred[c]) for c, v in m.cells.items()),
            "exhaustive": exhaustive,
            "same_as_default": self._inferred(lambda r: r == DEFAULT),
            "same_code": self._inferred(lambda r: r != DEFAULT),
            "skipped_by_models": sum(len(v) for v in s.model_skipped.values()),
            "out_of_reach": sum(len(v) for v in s.out_of_reach.values()),
        }

    def _inferred(self, which) -> int:
        """The cells given another configuration's launches, that configuration
        `which`."""
        m = self.measured
        return sum(which(m.launches_of[(c, s, n)]) for c, v in m.inferred.items() for s, n in v)


class Tuning:
    """A tune over one or more communicator sizes: one Tuner (plan) per size,
    measured one after the other; one table {collective: {p: rules}}, so one
    file per format with a section (Open MPI, Intel MPI's tuning file) or
    condition (MPICH) per size;
    each size verified with that file. `launches`: measure.Launches unless
    given (a test's)."""

    def __init__(
        self, plans, catalog: Catalog, cfg: TuneConfig, outdir: Path, say=print, own_plans=None, mpi=None, launches=None
    ):
        self.catalog, self.cfg, self.outdir, self.say = catalog, cfg, outdir, say
        self.library = mpilibs.get(catalog.library)
        launches = launches or Launches(catalog)
        own_plans = own_plans or [None] * len(plans)
        self.tuners = [Tuner(plan, catalog, cfg, launches, say, own, mpi) for plan, own in zip(plans, own_plans)]
        for t in self.tuners:
            t.set_weights([x.p for x in self.tuners])
        self.unverified = False
        self.costs_run = None  # the pingpong launch that gave the guided search its costs
        self.said_left = set()  # (p, collective) left to the library, said once

    def table(self):
        """One table for every communicator size. A collective one size leaves
        to the library (standins.py) is left to it at every size: the
        library's settings cover every communicator size at once."""
        table, costs = {}, {}
        for t in self.tuners:
            tab, cost = t.table()
            for c in tab:
                table.setdefault(c, {}).update(tab[c])
                costs.setdefault(c, []).extend({"p": t.p, **x} for x in cost[c])
        for c in {c for t in self.tuners for c in t.left}:
            table[c] = {p: [Rule(0, DEFAULT)] for p in table[c]}
            costs[c] = []
        return table, costs

    def write(self, table) -> dict:
        """The library's files for `table` and env.sh, the settings that use
        them: always written together, so that env.sh never names a setting
        of rules no longer in the files. Returns {key: path}."""
        written = write_files(self.library, self.catalog, table, self.cfg.sizes_of, self.outdir)
        settings = self.library.use_settings(self.catalog, written, table)
        write_text(self.outdir / "env.sh", env_lines(self.library, settings))
        return written

    def _say_left(self):
        for t in self.tuners:
            for c, s in sorted(t.left.items()):
                if (t.p, c) not in self.said_left:
                    self.said_left.add((t.p, c))
                    self.say(
                        f"{c}: on {t.p} ranks at {s} B the library's default runs no "
                        f"{self.library.title} algorithm exactly as forcing it does, and its "
                        f"settings cannot keep the default beside rules: {c} keeps the "
                        f"library's own choice at every size"
                    )

    def _guided_costs(self):
        """The guided search without the user's costs measures them once,
        on the first communicator size's layout (p2p_costs.py)."""
        costless = [t.searcher for t in self.tuners if isinstance(t.searcher, Guided) and t.searcher.simulate is None]
        if costless:
            costs, self.costs_run = measured_costs(self.tuners[0].plan, self.cfg.sizes, self.say)
            simulate = simulator(costs)
            for searcher in costless:
                searcher.simulate = simulate

    def run(self) -> dict:
        self._guided_costs()
        for t in self.tuners:
            if len(self.tuners) > 1:
                self.say(f"communicator size {t.p}")
            t.read_defaults()
            t.search()
            t.own_algorithms()
        verification, runs, failures = [], [], []
        for round_ in range(self.cfg.verify_rounds):
            table, costs = self.table()
            self._say_left()
            written = self.write(table)
            verification, runs, failures = [], [], []
            for t in self.tuners:
                v, r, f = t.verify(table, written)
                verification += v
                runs += r
                failures += f
            V.correct_for_cells(verification, self.cfg.alpha)  # over every communicator size's cells
            if not any([t.withdraw([r for r in verification if r["p"] == t.p]) for t in self.tuners]):
                break
            self.say(
                "a tuned cell is slower than the default beyond noise: its rule is withdrawn and the file rewritten"
            )
            if round_ == self.cfg.verify_rounds - 1:  # no verification left: write the last state
                table, costs = self.table()
                written = self.write(table)
                self.unverified = True
                self.say("the files after the last withdrawal are not verified again (two verifications at most)")
        return result(self, table, costs, written, verification, runs, failures)
