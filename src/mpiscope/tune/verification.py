# SPDX-License-Identifier: BSD-3-Clause
"""The verification of one communicator size's rules (verdicts.py says what
is checked and why): default, tuned and the rules' algorithms forced,
launched in turn; a launch disturbed by other work set aside and launched
again; per cell the speedup and verdict; and, where a debugger can tell
(mpilibs: reads_under_gdb), which algorithm function each cell enters with
the files and with its rule's algorithm forced."""

from __future__ import annotations

import numpy as np

from mpiscope.mpilibs.algorithm_catalog import DEFAULT
from mpiscope.mpilibs.selection import chosen
from mpiscope.tune import probes, verdicts as V
from mpiscope.tune.decide import judge
from mpiscope.tune.cell_samples import TUNED, Samples
from mpiscope.tune.library_sizes import library_size


class Verification:
    """`tune_samples`: the tune's own samples of this communicator size (their
    launch variance counts too); `mpi`: the library to read under gdb (None:
    by time only)."""

    def __init__(self, plan, catalog, library, cfg, launches, rng, tune_samples, say=print, mpi=None):
        self.plan, self.catalog, self.library, self.cfg = plan, catalog, library, cfg
        self.launches, self.rng, self.tune_samples, self.say, self.mpi = launches, rng, tune_samples, say, mpi
        self.p = plan.np
        self.disturbed = []  # launches set aside as disturbed (_relaunch_disturbed), every round's

    def run(self, table, written):
        """(rows, run ids, failures): default and tuned in the order D T T D …,
        so a drift of the machine falls on both alike, then the rules'
        algorithms forced."""
        cfg, params = self.cfg, self.library.use_settings(self.catalog, written, table)
        cells = {c: cfg.sizes_of(c) for c in cfg.collectives}
        rule_of = {
            (c, s): chosen(table[c][self.p], library_size(self.library, c, s, self.p)) for c in cells for s in cells[c]
        }
        named = {c: sorted({rule_of[(c, s)] for s in cells[c]} - {DEFAULT}) for c in cells}
        vs = Samples()
        steps = []
        for rep in range(cfg.verify_repeat):
            pair = [("default", DEFAULT), ("tuned", TUNED)]
            steps += pair if rep % 2 == 0 else pair[::-1]
        steps += [("forced", group) for group in self._forced_groups(named)]
        kinds = {}  # launch id -> its step

        def run(step, say):
            what, arg = step
            self.say(say)
            if what == "default":
                self.launches.launch(self.plan, cells, "verify default", vs, {c: DEFAULT for c in cells}, plain=True)
            elif what == "tuned":
                self.launches.launch(self.plan, cells, "verify tuned", vs, {c: TUNED for c in cells}, extra=params)
            else:
                sub = {c: [s for s in cells[c] if rule_of[(c, s)] == name] for c, name in arg.items()}
                self.launches.launch(self.plan, sub, "verify forced", vs, dict(arg))
            kinds[len(vs.runs)] = step

        for i, step in enumerate(steps, 1):
            run(step, f"verify [{i}/{len(steps)}] {step[0]}")
        self.disturbed += self._relaunch_disturbed(vs, kinds, run)
        out = [self._row(vs, c, s, rule_of[(c, s)]) for c in cfg.collectives for s in cells[c]]
        self._debugger_check(out, params, named, rule_of)
        return out, vs.runs, vs.failures

    def _row(self, vs, c, s, rule) -> dict:
        cfg = self.cfg
        d, t = vs.get(c, DEFAULT, s), vs.get(c, TUNED, s)
        row = {
            "collective": c,
            "size": s,
            "p": self.p,
            "rule": rule,
            "library_size": library_size(self.library, c, s, self.p),
        }
        if len(d) >= 2 and len(t) >= 2 and np.median(d) > 0 and np.median(t) > 0:
            # the launch variance of this cell: the verification's and the tune's own
            row.update(
                V.speedup_row(
                    vs.launches(c, DEFAULT, s),
                    vs.launches(c, TUNED, s),
                    self.rng,
                    cfg.noise,
                    cfg.alpha,
                    pool=self.tune_samples.groups_at(c, s),
                )
            )
        else:
            row.update(speedup=None, verdict="not measured")
        if rule != DEFAULT:
            forced = vs.get(c, rule, s)
            row["median_forced_s"] = float(np.median(forced)) if len(forced) else None
            row["selection_check"] = V.selection_check(t, forced, d)
            if len(forced) and len(d):
                row["forced_vs_default"] = judge(
                    V.with_forced_of(vs, self.tune_samples, c, s, rule),
                    c,
                    s,
                    DEFAULT,
                    rule,
                    self.rng,
                    cfg.noise,
                    cfg.alpha,
                    pool=vs.groups_at(c, s) + self.tune_samples.groups_at(c, s),
                )[2]
        return row

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
            out.append({"p": self.p, "run": vs.runs[k - 1], "kind": what, "factor": round(factor, 3)})
            left -= 1
            run(
                kinds[k],
                f"verify: the {what} launch {vs.runs[k - 1]} ran its cells "
                f"{factor:.2f}x slower than the other {what} launches (other work on "
                f"the node?): set aside, launched again",
            )
        return out

    def _forced_groups(self, named: dict) -> list:
        """The forced launches: the k-th {collective: algorithm} of each
        collective's `named` algorithms, or one collective at a time where
        forcing one changes another's (mpilibs: forces_alone)."""
        groups = [
            {c: names[k] for c, names in named.items() if k < len(names)}
            for k in range(max([len(v) for v in named.values()] + [0]))
        ]
        if self.library.forces_alone:
            groups = [{c: n} for g in groups for c, n in g.items()]
        return groups

    def _debugger_check(self, rows, params, named, rule_of):
        """What each cell enters under gdb, with the files and with the rule's
        algorithm forced beside them (the default: no algorithm forced); they
        must agree. Recorded per row as `library_selects` / `expected`."""
        mpi, lib = self.mpi, self.library
        if mpi is None or not lib.reads_under_gdb(mpi):
            return
        probe = probes.build(mpi, "collcall")
        colls = list(named)
        cells = [(r["collective"], r["size"]) for r in rows]
        self.say("verify: which algorithm function each cell enters, under gdb")
        tuned = lib.entered(mpi, probe, self.p, cells, params, colls)
        expected = lib.entered(
            mpi,
            probe,
            self.p,
            [c for c in cells if rule_of[c] == DEFAULT],
            lib.forcing_beside(self.catalog, {c: None for c in colls}, params),
            colls,
        )
        for group in self._forced_groups(named):
            forced = {c: self.catalog.find(c, n) for c, n in group.items()}
            sub = [c for c in cells if c[0] in group and rule_of[c] == group[c[0]]]
            expected.update(
                lib.entered(mpi, probe, self.p, sub, lib.forcing_beside(self.catalog, forced, params), colls)
            )
        for r in rows:
            key = (r["collective"], r["size"])
            r["library_selects"] = tuned.get(key)
            r["expected"] = expected.get(key)
