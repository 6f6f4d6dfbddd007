"""`mpiscope tune`: measure, decide, write, verify (docs/explanation/tuner.md).

1. Every collective's algorithms come from the library (discover.py).
2. The cells (collective, size, algorithm) are measured with the engine,
   each algorithm forced, the default included (measure.py). Adaptive
   (Tuner.search, search.py): the grid's ends with every algorithm, then
   its middle, the coarse grid and the middles of the intervals not yet
   resolved, each with the default first and then the algorithms not left
   out there (by measured verdicts at the interval's ends, by the
   default's launch spread there, search.py, and by cost models fitted to
   each algorithm's measured sizes, predict.py). Where Open MPI's default
   runs an algorithm exactly as forcing it does (read under gdb,
   default_probe.py), that algorithm is not launched: it has the default's
   launches; likewise an algorithm that falls back to another's code there.
3. Decisions with the launch as the unit (decide.py), rules compacted and bounded
   (rules.py), sizes converted to the library's (sizes.py).
4. Files written for the library in use, each read back by our reader.
5. Verification (verify.py): default and tuned alternating, the verdicts
   corrected for the number of cells; a cell slower beyond noise has its
   rule withdrawn and the files are rewritten and verified again.

A Tuner does one communicator size; Tuning runs one per size asked for and
writes one file holding every size's rules.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mpiscope.common.atomic import write_text
from mpiscope.common.errors import UsageError
from mpiscope.stats.compare import compare_samples
from mpiscope.tune import default_probe, mpich_rules, ompi_rules, rules as R, sizes as S, verify as V
from mpiscope.tune.decide import decide, judge
from mpiscope.tune.discover import DEFAULT, Catalog, device_cvar
from mpiscope.tune.measure import TUNED, Samples, forcing_mca, launch, measure_jobs
from mpiscope.tune.predict import MODEL_NAMES, fit, out_of_race
from mpiscope.tune.search import (Judge, blocking, could_win, default_ahead, lower_bound,
                                  resolved, survivors)
from mpiscope.tune.weights import for_comm_size, on_grid, weighted

LOCAL = 4  # measured sizes per cost-model fit (the nearest to the size predicted)

FILES = {"openmpi": "ompi-rules.conf", "openmpi-json": "ompi-rules.json",
         "mpich": "mpich-selection.json"}


@dataclass
class TuneConfig:
    collectives: list
    sizes: list                 # engine sizes, the fine grid
    adaptive: bool = True
    coarse: int = 0             # adaptive: also every coarse-th size in the first refining pass (0: none)
    prune: float = 0.10         # margin by which an algorithm must lose at both ends to be left out
    model_prune: float | None = 0.25  # cost-model margin to leave an algorithm out (None: off)
    noise: float = 0.02
    alpha: float = 0.05
    max_rules: int = 8
    repeat: int = 3             # rounds of the measurement launches (>= 2: launch-level verdicts)
    verify_repeat: int = 3      # default/tuned pairs of the verification
    verify_rounds: int = 2      # verifications at most (after a withdrawal, again)
    seed: int = 1
    skip: tuple = ()            # algorithm names left out (e.g. ones that hang)
    weights: dict | None = None  # {collective: {comm size or None: {engine size: calls}}} (weights.py)
    weights_left_out: tuple = ()   # collectives of the weights file mpiscope does not tune
    machine: object | None = None  # cost-model parameters for the report


def usable(catalog: Catalog, coll: str, p: int, skip=()) -> list:
    """The algorithms worth forcing on p ranks: Open MPI's two_proc ones abort
    with any other p."""
    return [a.name for a in catalog.algorithms.get(coll, [])
            if a.name not in skip and ("two_proc" not in a.name or p == 2)]


def coarse_grid(sizes: list, step: int) -> list:
    grid = sizes[::max(1, step)]
    return grid + ([sizes[-1]] if sizes[-1] not in grid else [])


class Tuner:
    def __init__(self, plan, catalog: Catalog, cfg: TuneConfig, outdir: Path, say=print,
                 own_plan=None):
        self.plan, self.catalog, self.cfg, self.outdir, self.say = plan, catalog, cfg, outdir, say
        self.own_plan = own_plan  # the engine's own algorithms (--algo all), or None
        self.p = plan.np
        self.samples = Samples()
        self.rng = np.random.default_rng(cfg.seed)
        self.names = {c: [DEFAULT] + usable(catalog, c, self.p, cfg.skip) for c in cfg.collectives}
        self.measured = {c: set() for c in cfg.collectives}  # (size, name) cells with samples
        # {(collective, size): (the algorithm the default runs there, whether
        # exactly as forced)}, {(collective, size, name): the configuration
        # forcing name runs there} (read_cells; {}: not known)
        self.default_runs, self.runs_as = {}, {}
        # adaptive: {(collective, size, name): the configuration whose launches
        # are name's there} (default_probe.representatives): not launched on its own
        self.launches_of = {}
        self.inferred = {c: set() for c in cfg.collectives}  # (size, name) cells given them
        self.model_skipped = {c: set() for c in cfg.collectives}  # (size, name) left out by the models
        # (size, name) that could not win there -> the lower bound that said so
        self.out_of_reach = {c: {} for c in cfg.collectives}
        self.fits = {}       # coll -> {name: [(size predicted, predict.Fit)]}, as the search used them
        self.winners = {}    # (coll, size) -> winner
        self.rows = {}       # (coll, size) -> decision rows
        self.withdrawn = []  # (coll, size, speedup)
        self.disturbed = []  # verification launches set aside as disturbed (_relaunch_disturbed)
        self.set_weights([self.p])

    def set_weights(self, tuned: list):
        """The application's calls this communicator size answers for, on the
        size grid: {collective: {grid size: calls}} (empty without --weights)."""
        mine = for_comm_size(self.cfg.weights, self.p, tuned)
        self.weights = {c: on_grid(by, self.sizes_of(c)) for c, by in mine.items()
                        if c in self.names}

    def sizes_of(self, coll):
        return [0] if coll == "barrier" else self.cfg.sizes

    # ------------------------------------------------------------ measure + decide

    def _measure(self, jobs: dict):
        """jobs {collective: {name: sizes}}, measured in the order of self.names;
        a cell whose code another configuration runs (self.launches_of) is
        that one's cell: launched once, and the launches are both's."""
        wanted = {}
        for c, by in jobs.items():
            for n, sizes in by.items():
                for s in sizes:
                    r = self.launches_of.get((c, s, n), n)
                    if (s, r) not in self.measured[c]:
                        wanted.setdefault(c, {}).setdefault(r, set()).add(s)
        ordered = {c: [(n, sorted(by[n])) for n in self.names[c] if n in by]
                   for c, by in wanted.items()}
        measure_jobs(self.plan, self.catalog, ordered, self.samples, self.cfg.repeat, self.say)
        for c, pairs in ordered.items():
            for n, sizes in pairs:
                self.measured[c] |= {(s, n) for s in sizes}
        for (c, s, n), r in self.launches_of.items():
            if c in self.measured and n in self.names[c] and (s, r) in self.measured[c] \
                    and (s, n) not in self.measured[c]:
                for launch_id, values in self.samples.values.get((c, r, s), []):
                    self.samples.add(c, n, s, values, launch_id)
                self.measured[c].add((s, n))
                self.inferred[c].add((s, n))
        for c, by in jobs.items():
            for s in sorted({s for sizes in by.values() for s in sizes}):
                self._decide(c, s)

    def _decide(self, coll, size):
        names = [n for n in self.names[coll] if (size, n) in self.measured[coll]]
        winner, rows = decide(self.samples, coll, size, names, self.rng, self.cfg.noise,
                              self.cfg.alpha, family=len(self.names[coll]) - 1)
        for r in rows:
            if (size, r["algorithm"]) in self.inferred[coll]:
                r["launches_of"] = self.launches_of[(coll, size, r["algorithm"])]
        self.winners[(coll, size)], self.rows[(coll, size)] = winner or DEFAULT, rows
        return winner or DEFAULT

    def search(self):
        """Exhaustive: every size × every algorithm. Adaptive (search.py says
        why each step is sound): the two ends of the size grid with every
        algorithm; then, round by round, each interval between measured sizes
        is resolved (its winner inherited); or, where algorithms left out of
        reach at its ends alone keep it from that, has those measured there
        and is looked at again; or is measured at its middle size
        (in the first round at the --coarse grid's sizes, when given) with the
        algorithms not left out on it (_measure_points: the default first,
        then those that could still win there), and split there. Sizes the
        application calls (--weights) are always measured."""
        cfg = self.cfg
        if not cfg.adaptive:
            self.say("every size × every algorithm")
            self._measure({c: {n: self.sizes_of(c) for n in self.names[c]} for c in cfg.collectives})
            return
        fine = {c: self.sizes_of(c) for c in cfg.collectives}
        self.launches_of = default_probe.representatives(self.default_runs, self.runs_as)
        models = cfg.model_prune is not None
        ends = {c: sorted({f[0], f[-1]}) for c, f in fine.items()}
        # with the cost models: the middle size too, so that each fit has a residual
        middle = {c: [f[len(f) // 2]] for c, f in fine.items() if models and f[len(f) // 2] not in ends[c]}
        self.say("pass 1: the grid's ends × every algorithm" +
                 ("; its middle, the default first" if models else ""))
        self._measure({c: {n: ends[c] for n in self.names[c]} for c in cfg.collectives})
        self._measure_points({c: {m: self.names[c] for m in mids} for c, mids in middle.items()})
        judges = {c: Judge(self.samples, c, self.rng, cfg.alpha, bounds=self.out_of_reach[c])
                  for c in cfg.collectives}
        pending = {c: list(zip(e, e[1:])) for c in cfg.collectives
                   for e in [sorted(set(ends[c]) | set(middle.get(c, [])))] if len(e) > 1}
        first = True
        while pending:
            points, nxt, unblock = {}, {}, {}
            for c, intervals in pending.items():
                heavy = {s for s, calls in self.weights.get(c, {}).items() if calls > 0}
                considered = self.measured[c] | self.out_of_reach[c].keys()
                for lo, hi in intervals:
                    between = [s for s in fine[c] if lo < s < hi]
                    if not between:
                        continue
                    keep = survivors(judges[c], lo, hi, self.names[c], considered, cfg.prune)
                    must = sorted(heavy & set(between))
                    if not must and (resolved(judges[c], lo, hi, self.winners_of(c), keep, cfg.noise)
                                     or self._default_holds(c, lo, hi, between, keep)):
                        for s in between:
                            self.winners[(c, s)] = self.winners[(c, lo)]
                        continue
                    cells = [] if must else blocking(judges[c], lo, hi, self.winners_of(c), keep,
                                                     cfg.noise)
                    if cells:   # measure those at the ends, and look at the interval again
                        for s, n in cells:
                            unblock.setdefault(c, {}).setdefault(n, set()).add(s)
                        nxt.setdefault(c, []).append((lo, hi))
                        continue
                    grid = ([s for s in coarse_grid(fine[c], cfg.coarse) if lo < s < hi]
                            if first and cfg.coarse else [])
                    at = sorted(set(grid or [between[len(between) // 2]]) | set(must))
                    for s in at:
                        out = (out_of_race(self._fits(c, s, keep), s, cfg.model_prune)
                               if models else set())
                        self.model_skipped[c] |= {(s, n) for n in out}
                        points.setdefault(c, {})[s] = [n for n in keep if n not in out]
                    cuts = [lo] + at + [hi]
                    nxt.setdefault(c, []).extend(zip(cuts, cuts[1:]))
            if not points and not unblock:
                break
            for c, by in unblock.items():
                for n, sizes in by.items():
                    for s in sizes:
                        del self.out_of_reach[c][(s, n)]
            self.say("pass: " + "; ".join(f"{c} {len(by)} sizes" for c, by in points.items()) +
                     "".join(f"; {c} {sum(map(len, by.values()))} left out, to resolve"
                             for c, by in unblock.items()))
            self._measure(unblock)
            self._measure_points(points)
            pending, first = nxt, False

    def _default_holds(self, c, lo, hi, between, keep) -> bool:
        """The default won at lo and hi, runs one algorithm exactly as forced
        from lo to hi (default_runs), and every algorithm still in is behind
        it at both ends (search.default_ahead)."""
        sizes = [lo, *between, hi]
        runs = {self.default_runs.get((c, s)) for s in sizes}
        # an algorithm running the default's code at every size is the default
        others = [n for n in keep
                  if any(self.launches_of.get((c, s, n)) != DEFAULT for s in sizes)]
        return (self.winners.get((c, lo)) == DEFAULT == self.winners.get((c, hi))
                and len(runs) == 1 and next(iter(runs)) is not None and next(iter(runs))[1]
                and default_ahead(self.samples, c, (lo, hi), others, self.out_of_reach[c],
                                  self.cfg.noise))

    def _measure_points(self, points: dict):
        """points {collective: {size: names}}: the default first at every size,
        then each other algorithm where it could still win (search.could_win,
        against its own launches at the nearest sizes measured)."""
        self._measure({c: {DEFAULT: set(by)} for c, by in points.items() if by})
        jobs = {}
        for c, by in points.items():
            for s, names in by.items():
                for n in names:
                    if n == DEFAULT or (s, n) in self.measured[c]:
                        continue
                    at = [m for m, x in self.measured[c] if x == n]
                    below = max((m for m in at if m < s), default=None)
                    above = min((m for m in at if m > s), default=None)
                    bound = lower_bound(self.samples, c, s, n, below, above)
                    if not could_win(self.samples, c, s, bound, self.cfg.repeat,
                                     len(self.names[c]) - 1, self.cfg.alpha, self.cfg.noise):
                        self.out_of_reach[c][(s, n)] = bound
                    else:
                        jobs.setdefault(c, {}).setdefault(n, set()).add(s)
        if jobs:
            self._measure(jobs)

    def _fits(self, coll, size, names) -> dict:
        """Each algorithm's cost model fitted to its medians at the LOCAL measured
        sizes nearest to `size` (in ratio; predict.py): what is not affine over
        the whole grid (protocol switches) shows in the residual only where it
        happens. Kept in self.fits for the result."""
        out = {}
        for n in names:
            if n == DEFAULT:
                continue
            near = sorted((s for s, m in self.measured[coll] if m == n),
                          key=lambda s: abs(math.log(s / size)) if s > 0 else math.inf)[:LOCAL]
            f = fit(coll, n, self.p, {s: self.samples.median(coll, n, s) for s in near})
            if f is not None:
                out[n] = f
                self.fits.setdefault(coll, {}).setdefault(n, []).append((size, f))
        return out

    def winners_of(self, coll):
        return {s: w for (c, s), w in self.winners.items() if c == coll}

    def cell_counts(self):
        exhaustive = sum(len(self.sizes_of(c)) * len(self.names[c]) for c in self.cfg.collectives)
        return {"measured": sum(len(v - self.inferred[c]) for c, v in self.measured.items()),
                "exhaustive": exhaustive,
                "same_as_default": self._inferred(lambda r: r == DEFAULT),
                "same_code": self._inferred(lambda r: r != DEFAULT),
                "skipped_by_models": sum(len(v) for v in self.model_skipped.values()),
                "out_of_reach": sum(len(v) for v in self.out_of_reach.values())}

    def _inferred(self, which) -> int:
        """The cells given another configuration's launches, that configuration
        `which`."""
        return sum(which(self.launches_of[(c, s, n)]) for c, v in self.inferred.items()
                   for s, n in v)

    # ------------------------------------------------------------ rules and files

    def table(self):
        """{coll: {p: rules}} in the library's sizes, and the bound's cost per collective."""
        table, costs = {}, {}
        lib = self.catalog.library
        for c in self.cfg.collectives:
            pts = []
            for s in self.sizes_of(c):
                w = self.winners.get((c, s), DEFAULT)
                meds = {n: self.samples.median(c, n, s) for n in self.names[c]}
                calls = self.weights.get(c, {}).get(s, 0.0) if self.cfg.weights else None
                pts.append(R.Point(S.library_size(lib, c, s, self.p), w,
                                   {n: m for n, m in meds.items() if m}, calls))
            rules, cost = R.bounded(pts, self.cfg.max_rules)
            table[c] = {self.p: rules}
            costs[c] = [{"library_size": s, "slowdown": x, **({"application_s": a} if a is not None
                                                                  else {})}
                        for s, x, a in cost]
        return table, costs

    def write_files(self, table) -> dict:
        """Writes the files the library in use reads, each read back; returns their paths."""
        cat, out = self.catalog, self.outdir
        written = {}
        if cat.library == "openmpi":
            text = ompi_rules.write_classic(table, cat)
            parsed = ompi_rules.read_classic(text, cat, FILES["openmpi"])
            for c, by_p in table.items():
                for p, rules in by_p.items():
                    for s in self.sizes_of(c):
                        size = S.library_size("openmpi", c, s, p)
                        want = R.chosen(rules, size)
                        got = ompi_rules.classic_selects(parsed, c, p, size)
                        if got != ompi_rules._number(cat, c, want):
                            raise RuntimeError(f"our reader finds {got} for {c} p={p} {s} B, "
                                               f"not {want}")
            write_text(out / FILES["openmpi"], text)
            written["openmpi"] = out / FILES["openmpi"]
            if int(cat.version.split(".")[0]) >= 6:  # Open MPI 6/main also reads JSON rules
                doc = ompi_rules.write_json(table, cat)
                jparsed = ompi_rules.read_json(doc, cat)
                for c, by_p in table.items():
                    for p, rules in by_p.items():
                        for s in self.sizes_of(c):
                            want = R.chosen(rules, S.library_size("openmpi", c, s, p))
                            got = ompi_rules.json_selects(jparsed, c, p,
                                                          S.library_size("openmpi", c, s, p))
                            if got != ("ignore" if want == DEFAULT else want):
                                raise RuntimeError(f"our JSON reader finds {got} for {c} p={p} "
                                                   f"{s} B, not {want}")
                write_text(out / FILES["openmpi-json"], doc)
                written["openmpi-json"] = out / FILES["openmpi-json"]
        else:
            text = mpich_rules.write(table, cat)
            tree = mpich_rules.read(text, cat, FILES["mpich"])
            for c, by_p in table.items():
                for p, rules in by_p.items():
                    for s in self.sizes_of(c):
                        size = S.library_size("mpich", c, s, p)
                        want = R.chosen(rules, size)
                        got = mpich_rules.selects(tree, c, p, size)
                        if want != DEFAULT and got != cat.find(c, want).container:
                            raise RuntimeError(f"our reader finds {got} for {c} p={p} {s} B, "
                                               f"not {want}")
            write_text(out / FILES["mpich"], text)
            written["mpich"] = out / FILES["mpich"]
        return written

    def use_params(self, written, table) -> dict:
        """What a job sets to use the files (env.sh; the verification's tuned
        launch). MPICH: the device's own algorithms, which would override the
        file, are switched off only for the collectives `table` gives a rule
        naming an algorithm, where the per-collective switch exists; every
        other collective runs exactly as without the file."""
        cat = self.catalog
        if cat.library == "openmpi":
            params = {"coll_tuned_use_dynamic_rules": "1",
                      "coll_tuned_dynamic_rules_filename": str(written["openmpi"].absolute())}
            if cat.excluded_components:
                params["coll"] = "^" + ",".join(cat.excluded_components)
            return params
        params = {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": str(written["mpich"].absolute())}
        ruled = sorted(c for c, by_p in table.items()
                       if any(r.algorithm != DEFAULT for rules in by_p.values() for r in rules))
        if cat.device_override and ruled:
            if set(ruled) <= cat.device_percoll:
                params["MPIR_CVAR_DEVICE_COLLECTIVES"] = "percoll"
                params.update({device_cvar(c): "0" for c in ruled})
            else:
                params["MPIR_CVAR_DEVICE_COLLECTIVES"] = "none"
        return params

    def env_lines(self, params) -> str:
        lines = ["# written by mpiscope tune: add to a job script"]
        if self.catalog.library == "openmpi":
            lines += [f"export OMPI_MCA_{k}={v}" for k, v in params.items()]
            lines.append("# or on the command line: mpirun " +
                         " ".join(f"--mca {k} {v}" for k, v in params.items()) + " ...")
        else:
            lines += [f"export {k}={v}" for k, v in params.items()]
            lines.append("# or on the command line: mpiexec " +
                         " ".join(f"-genv {k} {v}" for k, v in params.items()) + " ...")
        return "\n".join(lines) + "\n"

    # ------------------------------------------------------------ verification

    def verify(self, table, written):
        """Default, tuned and the rules' algorithms forced, launched in turn
        (default and tuned in the order D T T D …, so a drift of the machine
        falls on both alike)."""
        cfg, params = self.cfg, self.use_params(written, table)
        cells = {c: self.sizes_of(c) for c in cfg.collectives}
        rule_of = {(c, s): R.chosen(table[c][self.p], S.library_size(self.catalog.library, c, s,
                                                                      self.p))
                   for c in cells for s in cells[c]}
        # launch k of the forced ones: each collective's k-th algorithm named by a rule
        named = {c: sorted({rule_of[(c, s)] for s in cells[c]} - {DEFAULT}) for c in cells}
        vs = Samples()
        steps = []
        for rep in range(cfg.verify_repeat):
            pair = [("default", DEFAULT), ("tuned", TUNED)]
            steps += pair if rep % 2 == 0 else pair[::-1]
        for k in range(max([len(v) for v in named.values()] + [0])):
            steps.append(("forced", k))
        kinds = {}  # launch id -> its step

        def run(step, say):
            what, arg = step
            self.say(say)
            if what == "default":
                launch(self.plan, self.catalog, cells, "verify default", vs,
                       {c: DEFAULT for c in cells}, plain=True)
            elif what == "tuned":
                launch(self.plan, self.catalog, cells, "verify tuned", vs,
                       {c: TUNED for c in cells}, extra=params)
            else:
                sub = {c: [s for s in cells[c] if rule_of[(c, s)] == named[c][arg]]
                       for c in cells if arg < len(named[c])}
                launch(self.plan, self.catalog, sub, "verify forced", vs,
                       {c: named[c][arg] for c in sub})
            kinds[len(vs.runs)] = step

        for i, step in enumerate(steps, 1):
            run(step, f"verify [{i}/{len(steps)}] {step[0]}")
        self.disturbed += self._relaunch_disturbed(vs, kinds, run)
        out = []
        for c in cfg.collectives:
            for s in cells[c]:
                d, t = vs.get(c, DEFAULT, s), vs.get(c, TUNED, s)
                rule = rule_of[(c, s)]
                row = {"collective": c, "size": s, "p": self.p, "rule": rule,
                       "library_size": S.library_size(self.catalog.library, c, s, self.p)}
                if len(d) >= 2 and len(t) >= 2 and np.median(d) > 0 and np.median(t) > 0:
                    # the launch variance of this cell: the verification's and the tune's own
                    row.update(V.speedup_row(vs.launches(c, DEFAULT, s), vs.launches(c, TUNED, s),
                                             self.rng, cfg.noise, cfg.alpha,
                                             pool=self.samples.groups_at(c, s)))
                else:
                    row.update(speedup=None, verdict="not measured")
                if rule != DEFAULT:
                    forced = vs.get(c, rule, s)
                    row["median_forced_s"] = float(np.median(forced)) if len(forced) else None
                    row["selection_check"] = V.selection_check(t, forced, d)
                    if len(forced) and len(d):
                        row["forced_vs_default"] = judge(
                            V.with_forced_of(vs, self.samples, c, s, rule), c, s, DEFAULT, rule,
                            self.rng, cfg.noise, cfg.alpha,
                            pool=vs.groups_at(c, s) + self.samples.groups_at(c, s))[2]
                out.append(row)
        self._debugger_check(out, params, named, rule_of)
        return out, vs.runs, vs.failures

    def _relaunch_disturbed(self, vs, kinds, run) -> list:
        """A default or tuned launch that ran its cells DISTURBED times slower
        than the other launches of its kind is set aside and launched again,
        verify_repeat times at most: what remains compares the rules, not the
        load of the moment."""
        left, out = self.cfg.verify_repeat, []
        while left > 0:
            factors = {**V.launch_factors(vs, DEFAULT), **V.launch_factors(vs, TUNED)}
            bad = sorted((f, k) for k, f in factors.items() if f >= V.DISTURBED)
            if not bad:
                break
            factor, k = bad[-1]
            what = kinds[k][0]
            vs.drop_launch(k)
            out.append({"p": self.p, "run": vs.runs[k - 1], "kind": what,
                        "factor": round(factor, 3)})
            left -= 1
            run(kinds[k], f"verify: the {what} launch {vs.runs[k - 1]} ran its cells "
                          f"{factor:.2f}x slower than the other {what} launches (other work on "
                          f"the node?): set aside, launched again")
        return out

    def _debugger_check(self, rows, params, named, rule_of):
        """Open MPI: which function each cell enters under gdb, with the file and
        with the rule's algorithm forced (the default: no algorithm forced);
        they must agree. Recorded per row as `library_selects` / `expected`."""
        from mpiscope.engine.mpi import identify
        from mpiscope.tune import callprobe
        mpi = identify(self.plan.mpicc)
        if not callprobe.available(mpi) or mpi.launcher is None:
            return
        colls = list(named)
        cells = [(r["collective"], r["size"]) for r in rows]
        self.say("verify: which algorithm function each cell enters, under gdb")
        tuned = callprobe.entered(mpi, mpi.launcher, self.p, cells, params, colls)
        expected = callprobe.entered(mpi, mpi.launcher, self.p,
                                     [c for c in cells if rule_of[c] == DEFAULT],
                                     self._mca({c: None for c in colls}), colls)
        for k in range(max([len(v) for v in named.values()] + [0])):
            forced = {c: self.catalog.find(c, named[c][k]) for c in colls if k < len(named[c])}
            sub = [c for c in cells if c[0] in forced and rule_of[c] == named[c[0]][k]]
            expected.update(callprobe.entered(mpi, mpi.launcher, self.p, sub, self._mca(forced),
                                              colls))
        for r in rows:
            key = (r["collective"], r["size"])
            r["library_selects"] = tuned.get(key)
            r["expected"] = expected.get(key)

    def _mca(self, forced: dict) -> dict:
        """The MCA parameters of a measurement launch forcing {coll: Algorithm or None}."""
        return forcing_mca(self.catalog, forced)

    def read_cells(self, mpi):
        """Open MPI under gdb: self.default_runs, the algorithm the default runs
        at each cell and whether exactly as forcing it does, and
        self.runs_as, the forced algorithms that run another's code
        (default_probe.py); left empty where that cannot be read."""
        if not default_probe.available(mpi):
            return
        self.say(f"what the default and each algorithm run at each cell on {self.p} ranks, "
                 "under gdb")
        cells = [(c, s) for c in self.cfg.collectives for s in self.sizes_of(c)]
        names = {c: [n for n in ns if n != DEFAULT] for c, ns in self.names.items()}
        try:
            got = default_probe.read_cells(mpi, self.catalog, self.p, cells, names, self._mca,
                                           self.say)
            self.default_runs, self.runs_as = got.default_runs, got.runs_as
        except (subprocess.TimeoutExpired, UsageError) as e:
            self.say(f"the default's algorithm could not be read under gdb ({e}): every cell "
                     "is measured")

    def withdraw(self, cells):
        """Rules of cells where tuned is slower beyond noise go back to the default."""
        slower = [r for r in cells if r.get("verdict") == "tuned slower" and r["rule"] != DEFAULT]
        for r in slower:
            self.winners[(r["collective"], r["size"])] = DEFAULT
            self.withdrawn.append({"collective": r["collective"], "size": r["size"],
                                   "algorithm": r["rule"], "speedup": r["speedup"]})
        return bool(slower)

    # ------------------------------------------------------------ whole

    def own_algorithms(self):
        """Our own algorithms (engine/colls/) at every size: where the best of them
        beats every algorithm the library offers (compare's verdict against the
        library's best median), by how much."""
        if self.own_plan is None or not self.own_plan.benches:
            return []
        from mpiscope.measure import runner
        from mpiscope.store.ingest import load
        from mpiscope.store.series import all_series_samples

        self.say(f"our own algorithms: {', '.join(self.own_plan.benches)}")
        run_dir, context = runner.run(self.own_plan, [sys.argv[0], "tune", "own algorithms"])
        self.samples.runs.append(context["run_id"])
        table, run = load(run_dir)
        own = {}
        for bench, algo, size, smp in all_series_samples(table, run):
            if algo not in (None, "mpi") and len(smp.values):
                own.setdefault((bench, int(size)), {})[algo] = smp.values
        out = []
        for (coll, size), algs in sorted(own.items()):
            lib = {n: self.samples.get(coll, n, size) for n in self.names.get(coll, [])}
            lib = {n: v for n, v in lib.items() if len(v)}
            if not lib:
                continue
            best_lib = min(lib, key=lambda n: float(np.median(lib[n])))
            best_own = min(algs, key=lambda n: float(np.median(algs[n])))
            ratio, p, verdict, _ = compare_samples(lib[best_lib], algs[best_own], self.rng,
                                                   noise=self.cfg.noise, alpha=self.cfg.alpha,
                                                   n_boot=1000)
            out.append({"collective": coll, "size": size, "best_library": best_lib,
                        "best_own": best_own, "speedup": 1.0 / ratio.point,
                        "speedup_low": 1.0 / ratio.high, "speedup_high": 1.0 / ratio.low,
                        "own_beats_library": verdict == "faster"})
        return out


class Tuning:
    """A tune over one or more communicator sizes: one Tuner (plan) per size,
    measured one after the other; one table {collective: {p: rules}}, so one
    file per format with a section (Open MPI) or condition (MPICH) per size;
    each size verified with that file."""

    def __init__(self, plans, catalog: Catalog, cfg: TuneConfig, outdir: Path, say=print,
                 own_plans=None, mpi=None):
        self.catalog, self.cfg, self.outdir, self.say = catalog, cfg, outdir, say
        self.mpi = mpi  # the library's Mpi: read what its default runs (None: not)
        own_plans = own_plans or [None] * len(plans)
        self.tuners = [Tuner(plan, catalog, cfg, outdir, say, own)
                       for plan, own in zip(plans, own_plans)]
        for t in self.tuners:
            t.set_weights([x.p for x in self.tuners])
        self.unverified = False

    def table(self):
        table, costs = {}, {}
        for t in self.tuners:
            tab, cost = t.table()
            for c in tab:
                table.setdefault(c, {}).update(tab[c])
                costs.setdefault(c, []).extend({"p": t.p, **x} for x in cost[c])
        return table, costs

    def run(self) -> dict:
        first = self.tuners[0]
        for t in self.tuners:
            if len(self.tuners) > 1:
                self.say(f"communicator size {t.p}")
            if self.mpi is not None:
                t.read_cells(self.mpi)
            t.search()
            t.own = t.own_algorithms()
        verification, runs, failures = [], [], []
        for round_ in range(self.cfg.verify_rounds):
            table, costs = self.table()
            written = first.write_files(table)
            params = first.use_params(written, table)
            write_text(self.outdir / "env.sh", first.env_lines(params))
            verification, runs, failures = [], [], []
            for t in self.tuners:
                v, r, f = t.verify(table, written)
                verification += v
                runs += r
                failures += f
            V.correct_for_cells(verification, self.cfg.alpha)  # over every communicator size's cells
            if not any([t.withdraw([r for r in verification if r["p"] == t.p])
                        for t in self.tuners]):
                break
            self.say("a tuned cell is slower than the default beyond noise: its rule is "
                     "withdrawn and the file rewritten")
            if round_ == self.cfg.verify_rounds - 1:  # no verification left: write the last state
                table, costs = self.table()
                written = first.write_files(table)
                self.unverified = True
                self.say("the files after the last withdrawal are not verified again "
                         "(two verifications at most)")
        return self.result(table, costs, written, verification, runs, failures)

    def result(self, table, costs, written, verification, vruns, vfailures) -> dict:
        cat, cfg, ts = self.catalog, self.cfg, self.tuners
        judged = [r for r in verification if r.get("speedup")]
        in_effect = V.file_in_effect(verification)
        by_debugger = any(r.get("library_selects") for r in verification)
        counts = [t.cell_counts() for t in ts]
        return {
            "library": cat.library, "version": cat.version, "p": ts[0].p,
            "ps": [t.p for t in ts],
            "ppn": ts[0].plan.ppn, "cluster": ts[0].plan.cluster,
            "algorithms": cat.to_dict()["algorithms"],
            "excluded_components": cat.excluded_components,
            "sizes": {c: S.describe(cat.library, c) for c in cfg.collectives},
            "cells": {k: sum(x[k] for x in counts)
                      for k in ("measured", "exhaustive", "same_as_default", "same_code",
                                "skipped_by_models", "out_of_reach")},
            "default_runs": [{"collective": c, "p": t.p, "size": s, "algorithm": n,
                              "as_forced": exact}
                             for t in ts for (c, s), (n, exact) in sorted(t.default_runs.items())],
            "runs_as": [{"collective": c, "p": t.p, "size": s, "algorithm": n, "runs": r}
                        for t in ts for (c, s, n), r in sorted(t.runs_as.items())],
            "model_fits": [{"p": t.p, "collective": c, "algorithm": n, "at_size": s,
                            "model": f.model, "alpha_s": f.alpha, "beta_s_per_byte": f.beta,
                            "max_relative_residual": f.residual,
                            "left_out": (s, n) in t.model_skipped[c]}
                           for t in ts for c, by in t.fits.items() for n, fs in by.items()
                           for s, f in fs],
            "decisions": [{"collective": c, "p": t.p, "size": s,
                           "winner": t.winners.get((c, s), DEFAULT),
                           "measured": (c, s) in t.rows, "rows": t.rows.get((c, s), [])}
                          for c in cfg.collectives for t in ts for s in t.sizes_of(c)],
            "rules": {c: {str(p): [{"start": r.start, "algorithm": r.algorithm} for r in rs]
                          for p, rs in sorted(by_p.items())} for c, by_p in table.items()},
            "bound": {"max_rules": cfg.max_rules, "cost": costs},
            "files": {k: str(v) for k, v in written.items()},
            "env": str(self.outdir / "env.sh"),
            "verification": {
                "cells": verification,
                "geomean_speedup": V.geomean(r["speedup"] for r in judged),
                "slower_beyond_noise": [r for r in verification if r.get("verdict") == "tuned slower"],
                "file_in_effect": in_effect,
                "last_withdrawal_verified": not self.unverified,
                "checked_by": "gdb" if by_debugger else "time",
                "disturbed_launches": [d for t in ts for d in t.disturbed],
                "runs": vruns, "failures": vfailures},
            "withdrawn": [{"p": t.p, **w} for t in ts for w in t.withdrawn],
            "weights_left_out": list(cfg.weights_left_out),
            "weighted": weighted(cfg.weights, verification, [t.p for t in ts]),
            "changeovers": changeovers(ts, cat, cfg.machine),
            "own_algorithms": [{"p": t.p, **x} for t in ts for x in getattr(t, "own", [])],
            "runs": [r for t in ts for r in t.samples.runs],
            "failures": [f for t in ts for f in t.samples.failures],
        }


# ---------------------------------------------------------------- report pieces

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
            seq = [(s, t.winners.get((c, s), DEFAULT)) for s in t.cfg.sizes]
            entry = {"measured": [{"size": b[0], "from": a[1], "to": b[1]}
                                  for a, b in zip(seq, seq[1:]) if a[1] != b[1]]}
            runs = [(s, t.default_runs[(c, s)][0]) for s in t.cfg.sizes if (c, s) in t.default_runs]
            if runs:   # the library's own, read under gdb
                entry["library"] = [{"size": b[0], "from": a[1], "to": b[1]}
                                    for a, b in zip(runs, runs[1:]) if a[1] != b[1]]
            if machine is not None:
                entry["model"] = _model_changeovers(c, t.p, t.cfg.sizes, catalog, machine)
            by_p[str(t.p)] = entry
        out[c] = {"by_p": by_p}
    return out


def _model_changeovers(coll, p, sizes, catalog, machine):
    from mpiscope.models.costmodels import find, predict_time

    costs = machine.hockney_costs()
    names = {MODEL_NAMES[n]: n for n in catalog.names(coll)
             if n in MODEL_NAMES and find(coll, MODEL_NAMES[n])}
    if costs is None or len(names) < 2:
        return None
    seq = []
    for s in sizes:
        best = min(names, key=lambda m: predict_time(coll, m, s, p, costs))
        seq.append((s, names[best]))
    return [{"size": b[0], "from": a[1], "to": b[1]} for a, b in zip(seq, seq[1:]) if a[1] != b[1]]


def save(result: dict, outdir: Path):
    write_text(outdir / "tune.json", json.dumps(result, indent=2, default=str) + "\n")
