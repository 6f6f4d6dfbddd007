# SPDX-License-Identifier: BSD-3-Clause
"""The tune's searches, adaptive and guided, replayed on an exhaustive tune's
own measurements.

`bench/tune_fe.py adaptive` compares an adaptive tune with an exhaustive one
measured separately, so its agreement mixes two things: what the search
loses by not measuring every cell, and run-to-run noise. This script takes
exhaustive tunes, each an output directory (its tune.json and runs/, e.g.
kept by `bench/tune_fe.py adaptive --keep DIR` as DIR/<cluster>-full) or a
tune reduced by tests/tune_replay.py (tests/data/tune-replay/*.json, one
replay per communicator size), and runs the searches again offline with the
measurements served from those launches (each cell's launches as they were
measured, each once at most): the cells measured and the agreement with the exhaustive
decisions then count the search's loss alone. `bench/tune_fe.py adaptive`
prints this replay of its own exhaustive run too.

The guided search (`mpiscope tune --search guided`) needs the machine's
point-to-point costs: for a directory, the pingpong of --pingpong RUN; a
reduced tune holds no pingpong, so its Hockney line is fitted to the 2-rank
broadcast of the default (one message) at the grid's sizes, and those cells
count as measured by the guided search.

The first table gives per tune and search the cells measured of the
exhaustive grid, the decisions running the same code as the exhaustive
ones, and the geometric mean over the cells of the chosen algorithm's median
over the default's (in the exhaustive tune's measurements) against the
exhaustive tune's own. The second gives per tune where the guided search's
cells went (the default's, the simulated algorithms', the stand-ins') and
how many cells its simulation, at the accuracy its correction learned,
cannot place on either side of a verdict's bar (and of those, how many it
left out by their expected loss). Then per tune: the adaptive search's cells (and why
it left the others out); the exhaustive tune's own verdicts where the
default runs the forced algorithm exactly (the same code twice: 'same' is
expected but for false alarms); the decisions that differ; and the
algorithms measured per size of each collective.

No MPI and no cluster (except that, for an Open MPI tune that did not
record which algorithm its default runs, that is read from the installed
Open MPI when it is the tune's version): seconds.

To reproduce:

    .venv/bin/python bench/tune_search_replay.py tests/data/tune-replay/*.json \
        --json docs/validation/tune-search-replay.json
    .venv/bin/python bench/tune_search_replay.py DIR/<cluster>-full --pingpong RUN --repeat 3 \
        --json tune-search-replay.json
"""

import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import benchjson
from mpiscope.store.ingest import load
from mpiscope.store.series import all_series_samples
from mpiscope.mpilibs.algorithm_catalog import DEFAULT, Algorithm, Catalog
from mpiscope.mpilibs.library import Reading
from mpiscope.tune import tuner as T
from mpiscope.sim.costs import SimCosts
from mpiscope.tune.measure import Launches
from mpiscope.tune.model_fits import fit
from mpiscope.tune.readings import representatives, same_code
from mpiscope.tune.cell_samples import Samples

# cells within this many learned errors of a verdict's bar are those the simulation cannot settle
SETTLE_Z = 2.0


def stored_samples(runs: Path) -> Samples:
    """Every measurement launch of the tune (not the verification's), its
    samples under the algorithm it forced, one launch id each."""
    out = Samples()
    launch = 0
    for run_dir in sorted(d for d in runs.iterdir() if (d / "context.json").exists()):
        label = json.loads((run_dir / "context.json").read_text())["command"][2]
        if label.startswith(("verify", "own")):
            continue
        names = dict(part.split("=", 1) for part in label.split(", "))
        launch += 1
        table, run = load(run_dir)
        for bench, _algo, size, s in all_series_samples(table, run):
            if bench in names:
                out.add(bench, names[bench], int(size), s.values, launch)
    return out


class Replayed(Launches):
    """Launches serving every job from the stored launches."""

    def __init__(self, stored: Samples):
        super().__init__(None)
        self.stored = stored

    def measure(self, plan, jobs, samples, repeat=1, say=print):
        for coll, pairs in jobs.items():
            for name, sizes in pairs:
                for size in sizes:
                    for launch, values in self.stored.values.get((coll, name, size), []):
                        samples.add(coll, name, size, values, launch)


@dataclass
class Setup:
    """One communicator size of an exhaustive tune, ready to replay:
    `launches()` serves its measurements afresh; `costs` the point-to-point
    costs the guided search simulates with (None: no guided search), and
    `cost_cells` the cells of the tune's grid they came from ({(collective,
    size, name)}: charged to the guided search where it did not measure
    them itself), with `costs_from` saying where they came from."""
    library: str
    version: str
    p: int
    catalog: Catalog
    launches: object
    colls: list
    sizes: list
    runs: dict
    runs_as: dict
    costs: object = None
    cost_cells: set = field(default_factory=set)
    costs_from: str = ""
    exact_default_verdicts: dict = field(default_factory=dict)


def kept_setup(keep: Path, pingpong: Path | None = None) -> Setup:
    """The exhaustive tune kept in `keep` (tune.json, runs/); the guided
    search's costs from the pingpong of the run `pingpong` when given.
    Exits with a message when `keep` holds no exhaustive tune."""
    if not (keep / "tune.json").exists() or not (keep / "runs").is_dir():
        sys.exit(f"{keep}: no tune.json and runs/ in it; give the output directory of a "
                 "tune run with --exhaustive (bench/tune_fe.py adaptive --keep DIR keeps one)")
    doc = json.loads((keep / "tune.json").read_text())
    if doc["cells"]["measured"] != doc["cells"]["exhaustive"]:
        sys.exit(f"{keep}: this tune measured {doc['cells']['measured']} of "
                 f"{doc['cells']['exhaustive']} cells; replaying needs an exhaustive one")
    stored = stored_samples(keep / "runs")
    catalog = Catalog(doc["library"], doc["version"],
                      {c: [Algorithm(a["name"], a["value"], a.get("container")) for a in algs]
                       for c, algs in doc["algorithms"].items()}, "replay")
    runs, runs_as = reading(doc, catalog, [(d["collective"], d["size"]) for d in doc["decisions"]
                                           if d["p"] == doc["p"]])
    costs = None
    if pingpong is not None:
        from mpiscope.sim.measured import fitted_costs
        costs = fitted_costs(pingpong)
    return Setup(doc["library"], doc["version"], doc["p"], catalog, lambda: Replayed(stored),
                 list(dict.fromkeys(d["collective"] for d in doc["decisions"])),
                 sorted({d["size"] for d in doc["decisions"] if d["collective"] != "barrier"}),
                 runs, runs_as, costs, set(), f"the pingpong of {pingpong}" if pingpong else "",
                 same_check(doc, runs))


def stored_setups(path: Path) -> list:
    """One Setup per communicator size of a tune reduced by tests/tune_replay.py
    (tests/data/tune-replay/*.json), each stored launch of a cell served
    once at most (tune_replay.Replay's `once`). The guided search's Hockney costs are
    the line through the pingpong stored with the tune; where none was, the
    line through the 2-rank broadcast of the default (one message from root
    to the other rank) at every size of the grid, those cells charged to it."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from tune_replay import Replay, catalog_of, reading as stored_reading

    stored = json.loads(path.read_text())
    catalog = catalog_of(stored)
    if "pingpong" in stored:
        medians, source, charged = {int(s): t for s, t in stored["pingpong"].items()}, "its pingpong", set()
    else:
        probe = Samples()
        Replay(stored).launch(SimpleNamespace(np=2), {"bcast": stored["sizes"]}, "bcast=default", probe,
                              {"bcast": DEFAULT})
        medians = {s: probe.median("bcast", DEFAULT, s) for s in stored["sizes"]}
        source, charged = "the 2-rank broadcast of the default", {("bcast", s, DEFAULT) for s in stored["sizes"]}
    line = fit("bcast", DEFAULT, 2, medians, {}, min_points=2)
    costs = SimCosts(alpha_s=line.alpha, beta_s=line.beta, source=f"{source} (Hockney line)")
    out = []
    for p in stored["tune"]["ps"]:
        r = stored_reading(stored, p)
        out.append(Setup(catalog.library, catalog.version, p, catalog, lambda: Replay(stored, once=True),
                         stored["collectives"], stored["sizes"], r.default_runs, r.runs_as, costs,
                         charged if p == 2 else set(), source))
    return out


def searched(setup: Setup, search: str, repeat: int):
    """A Tuner of `setup` after its search: "exhaustive", "adaptive" or "guided"."""
    cfg = T.TuneConfig(collectives=setup.colls, sizes=setup.sizes, adaptive=search != "exhaustive",
                       search="guided" if search == "guided" else "adaptive",
                       sim_costs=setup.costs, repeat=repeat)
    plan = SimpleNamespace(np=setup.p, ppn=None, cluster=None)
    t = T.Tuner(plan, setup.catalog, cfg, setup.launches(), say=lambda *_: None)
    t.reading = Reading(setup.runs, setup.runs_as)
    t.search()
    return t


def tuned_over_default(full, winners, cells) -> tuple:
    """(geometric mean of the chosen algorithm's median over the default's, in
    the exhaustive tune's measurements; cells counted)."""
    logs = []
    for c, s in cells:
        w = winners.get((c, s), DEFAULT)
        med, base = full.measured.samples.median(c, w, s), full.measured.samples.median(c, DEFAULT, s)
        if med and base and med > 0 and base > 0:
            logs.append(math.log(med / base))
    return (math.exp(sum(logs) / len(logs)) if logs else 1.0), len(logs)


def compared(setup: Setup, full, t) -> dict:
    """What search `t` measured and decided, against the exhaustive `full`."""
    full_w, w = full.decisions.winners, t.decisions.winners
    cells = [(c, s) for c in setup.colls for s in full.cfg.sizes_of(c)]
    differ = [k for k in cells if full_w.get(k, DEFAULT) != w.get(k, DEFAULT)]
    # a rule naming an algorithm that runs the same code as the other's choice is the same rule
    reps = representatives(setup.runs, setup.runs_as)
    unlike = [k for k in differ if not same_code(reps, *k, full_w.get(k, DEFAULT), w.get(k, DEFAULT))]
    counts = t.cell_counts()
    charged = sum((s, n) not in t.measured.cells[c] for c, s, n in setup.cost_cells
                  if c in t.measured.cells) if t.cfg.search == "guided" else 0
    gm, _ = tuned_over_default(full, w, cells)
    per_size = {}
    for c in setup.colls:
        by = {}
        for s, n in t.measured.cells[c]:
            by[s] = by.get(s, 0) + 1
        per_size[c] = {"algorithms": len(full.names[c]),
                       "measured": {s: by.get(s, 0) for s in full.cfg.sizes_of(c)}}
    return {"measured": counts["measured"] + charged, "costs_cells": charged,
            "same_as_default": counts["same_as_default"], "same_code": counts["same_code"],
            "skipped_by_models": counts["skipped_by_models"], "out_of_reach": counts["out_of_reach"],
            "agree_same_code": len(cells) - len(unlike), "agree_same_name": len(cells) - len(differ),
            "geomean": gm,
            "differ": [{"collective": k[0], "size": k[1], "exhaustive": full_w.get(k, DEFAULT),
                        "chosen": w.get(k, DEFAULT), "same_code": k not in unlike} for k in differ],
            "per_size": per_size}


def guided_cells(setup: Setup, full, g) -> dict:
    """Where the guided search `g`'s cells went: the default's, those of
    algorithms with a simulated counterpart and of the stand-ins (without
    one), and the costs' cells it did not measure itself; `undecidable`:
    the cells its simulation, as accurate as it learned to be, cannot place
    on either side of the bar a verdict needs (at each size, every
    algorithm whose exhaustive median lies within SETTLE_Z learned errors
    of a comparison of two predictions of the default's median less the
    margin; and the default there), `left_out` those of them it did not
    measure; the learned error per collective at the end."""
    sg = g.searcher
    kinds = {"default": 0, "simulated": 0, "stand_in": 0}
    undecidable, left, errors = 0, 0, {}
    for c in setup.colls:
        for s, n in g.measured.cells[c] - g.measured.inferred[c]:
            kinds["default" if n == DEFAULT else "stand_in" if n in sg.unsimulated[c] else "simulated"] += 1
        err = sg.corrections[c].error(relative=True)
        errors[c] = err
        for s in full.cfg.sizes_of(c):
            d, bar = full.measured.samples.median(c, DEFAULT, s), sg._margin(c, s)
            near = [n for n in sg._rivals(c, s) if n != DEFAULT and d and full.measured.samples.median(c, n, s)
                    and abs(math.log(full.measured.samples.median(c, n, s) / d) + bar)
                    < SETTLE_Z * err * math.sqrt(2)]
            undecidable += len(near) + bool(near)
            left += sum((s, n) not in g.measured.cells[c] for n in near + [DEFAULT] * bool(near))
    charged = sum((s, n) not in g.measured.cells[c] for c, s, n in setup.cost_cells if c in g.measured.cells)
    return {**kinds, "costs": charged, "undecidable": undecidable, "left_out": left, "learned_error": errors}


def replay_setup(setup: Setup, repeat: int = 3) -> dict:
    """The adaptive search (its numbers at the top level, as before) and,
    where the setup has costs, the guided one (under "guided"), run again
    on the exhaustive tune's launches."""
    full = searched(setup, "exhaustive", repeat)
    cells = [(c, s) for c in setup.colls for s in full.cfg.sizes_of(c)]
    adap = compared(setup, full, searched(setup, "adaptive", repeat))
    got = {"library": setup.library, "version": setup.version, "p": setup.p, "sizes": len(setup.sizes),
           "exhaustive": full.cell_counts()["measured"], "cells": len(cells),
           "exhaustive_geomean": tuned_over_default(full, full.decisions.winners, cells)[0],
           "exact_default_verdicts": setup.exact_default_verdicts, **adap,
           "differ": [{**d, "adaptive": d.pop("chosen")} for d in adap["differ"]]}
    if setup.costs is not None:
        g = searched(setup, "guided", repeat)
        got["guided"] = {**compared(setup, full, g), "costs_from": setup.costs_from,
                         "unsimulated": {c: g.searcher.unsimulated[c] for c in setup.colls},
                         "cells_by_kind": guided_cells(setup, full, g)}
    return got


def replay(keep: Path, repeat: int = 3, pingpong: Path | None = None) -> dict:
    """The searches run again on the exhaustive tune kept in `keep`
    (measured with --repeat `repeat`): replay_setup's numbers."""
    return replay_setup(kept_setup(keep, pingpong), repeat)


SEARCHES = ("adaptive", "guided")


def _of(got: dict, search: str):
    return got if search == "adaptive" else got.get(search)


def totals(gots: list) -> dict:
    """Per search, over every replayed tune: cells measured and of the
    exhaustive grid, decisions running the same code, and the geometric mean
    of tuned/default against the exhaustive tune's (pooled over the cells)."""
    out = {}
    for search in SEARCHES:
        runs = [(g, _of(g, search)) for g in gots if _of(g, search)]
        if not runs:
            continue
        cells = sum(g["cells"] for g, _ in runs)

        def pooled(key):
            return math.exp(sum(g["cells"] * math.log(x[key] if key in x else g[key])
                                for g, x in runs) / cells)
        kinds = [x["cells_by_kind"] for _, x in runs if "cells_by_kind" in x]
        out[search] = {**({"undecidable": sum(k["undecidable"] for k in kinds)} if kinds else {}),
                       "measured": sum(x["measured"] for _, x in runs),
                       "exhaustive": sum(g["exhaustive"] for g, _ in runs),
                       "agree_same_code": sum(x["agree_same_code"] for _, x in runs), "cells": cells,
                       "geomean": pooled("geomean"), "exhaustive_geomean": pooled("exhaustive_geomean")}
    return out


def _row(name, search, x, g):
    gm, full_gm = x["geomean"], g["exhaustive_geomean"]
    return [name, search, x["measured"], g["exhaustive"], 100 * x["measured"] / g["exhaustive"],
            100 * x["agree_same_code"] / g["cells"], gm, full_gm, 100 * (gm / full_gm - 1)]


def comparison(gots: list, show=benchjson.show) -> dict:
    """One table: each search on each tune replayed, and over them all."""
    rows = [_row(f"{g['library']} {g['version']} p={g['p']}, {g['sizes']} sizes", search, _of(g, search), g)
            for g in gots for search in SEARCHES if _of(g, search)]
    if len(gots) > 1:
        rows += [_row("all", search, t, t) for search, t in totals(gots).items()]
    notes = ["tuned/default: the geometric mean over every cell of the chosen algorithm's median over "
             "the default's, both in the exhaustive tune's measurements",
             "targets (guided): measured <= 25% of the grid; same code >= 95%; geomean within 2% of "
             "the exhaustive tune's"]
    notes += [f"guided, {g['library']} p={g['p']}: costs from {x['costs_from']}"
              + (f" ({x['costs_cells']} of its cells, counted as measured)" if x["costs_cells"] else "")
              + "".join(f"; {c} without a simulated counterpart: {', '.join(n)}"
                        for c, n in x["unsimulated"].items() if n)
              for g in gots for x in [g.get("guided")] if x]
    return show("searches against exhaustive, replayed on the exhaustive tune's launches",
                ["tune", "search", "cells measured", "of the exhaustive", "measured %",
                 "decisions running the same code %", "tuned/default geomean",
                 "exhaustive tune's geomean", "geomean vs exhaustive %"], rows, notes)


def where_guided(gots: list, show=benchjson.show) -> dict:
    """One table: per replay, the guided search's cells by kind, and the
    cells its simulation could not have settled (guided_cells)."""
    rows = []
    for g in gots:
        x = (g.get("guided") or {}).get("cells_by_kind")
        if x:
            rows.append([f"{g['library']} {g['version']} p={g['p']}, {g['sizes']} sizes", x["default"],
                         x["simulated"], x["stand_in"], x["costs"], g["guided"]["measured"], x["undecidable"],
                         x["left_out"], g["exhaustive"], 100 * x["undecidable"] / g["exhaustive"],
                         " ".join(f"{c} {e:.2f}" for c, e in x["learned_error"].items())])
    if len(rows) > 1:
        rows.append(["all"] + [sum(r[i] for r in rows) for i in range(1, 9)]
                    + [100 * sum(r[6] for r in rows) / sum(r[8] for r in rows), ""])
    return show("guided: where the cells went, and the cells its simulation cannot settle",
                ["tune", "default", "algorithms simulated", "stand-ins (no counterpart)", "costs' cells",
                 "measured", "cannot be settled", "of those left out", "of the exhaustive",
                 "cannot be settled %", "learned error of a comparison (log)"], rows,
                ["cannot be settled: at each size, every algorithm whose exhaustive median is within "
                 f"{SETTLE_Z:g} learned errors of a comparison of two predictions (sqrt 2 times the collective's "
                 "learned error at the search's end) of the bar a verdict needs (the default's median less "
                 "the margin), and the default there: the simulation cannot say on which side of the bar "
                 "they fall; the guided search leaves one out where what it could gain beyond the bar, "
                 "averaged over that error (its expected loss), is within the noise threshold"])


def tables_of(got: dict, show=benchjson.show) -> list:
    """replay()'s numbers as the tables printed."""
    m, e, n = got["measured"], got["exhaustive"], got["cells"]
    out = [show(f"{got['library']} {got['version']}, p={got['p']}: the adaptive search replayed on the "
                "exhaustive tune's launches",
                ["cells measured", "of the exhaustive", "measured %", "given the default's launches",
                 "given another algorithm's (same code)", "left out by the cost models",
                 "out of reach of a verdict", "decisions running the same code", "with the same name",
                 "cells", "same code %"],
                [[m, e, 100 * m / e, got["same_as_default"], got["same_code"], got["skipped_by_models"],
                  got["out_of_reach"], got["agree_same_code"], got["agree_same_name"], n,
                  100 * got["agree_same_code"] / n]])]
    verdicts = got["exact_default_verdicts"]
    if verdicts:
        out.append(show("the exhaustive tune's verdicts, forced against default, where the default runs "
                        "the forced algorithm exactly", ["verdict", "cells"],
                        [[k, v] for k, v in sorted(verdicts.items(), key=str)]))
    if got["differ"]:
        out.append(show("decisions that differ", ["collective", "size B", "exhaustive", "adaptive",
                                                  "the same code"],
                        [[d["collective"], d["size"], d["exhaustive"], d["adaptive"],
                          "yes" if d["same_code"] else "no"] for d in got["differ"]]))
    guided = got.get("guided") or {}
    if guided.get("differ"):
        out.append(show("guided: decisions that differ", ["collective", "size B", "exhaustive", "guided",
                                                          "the same code"],
                        [[d["collective"], d["size"], d["exhaustive"], d["chosen"],
                          "yes" if d["same_code"] else "no"] for d in guided["differ"]]))
    out.append(show("algorithms the adaptive search measured per size",
                    ["collective", "algorithms with the default", "size:measured"],
                    [[c, x["algorithms"], " ".join(f"{s}:{k}" for s, k in x["measured"].items())]
                     for c, x in got["per_size"].items()]))
    return out


def tables(got: dict, show=benchjson.show) -> list:
    """One replay's tables (bench/tune_fe.py prints them): the searches
    compared, where the guided search's cells went, then the adaptive
    search's details."""
    return [comparison([got], show)] + ([where_guided([got], show)] if got.get("guided") else []) + tables_of(got, show)


def same_check(doc, runs) -> dict:
    """What the exhaustive tune, which measured both, said of each cell where
    the default runs an algorithm exactly as forced ({verdict: cells}): the
    same code twice, so its verdicts should be 'same' but for the tests'
    false alarms."""
    verdicts = {}
    for d in doc["decisions"]:
        name, exact = runs.get((d["collective"], d["size"]), (None, False))
        for r in d["rows"] if exact else []:
            if r["algorithm"] == name:
                verdicts[r.get("verdict")] = verdicts.get(r.get("verdict"), 0) + 1
    return verdicts


def reading(doc, catalog, cells) -> tuple:
    """(default_runs, runs_as): the algorithm the default runs at each cell
    and whether exactly as forced, and the forced algorithms that run another
    configuration's code (mpilibs: read_defaults). From the tune when its
    tune.json holds them (default_runs, runs_as), else read now from the
    installed Open MPI when it is the tune's version; else none."""
    if doc.get("default_runs") and "runs_as" in doc:
        return ({(r["collective"], r["size"]): (r["algorithm"], r["as_forced"])
                 for r in doc["default_runs"] if r["p"] == doc["p"]},
                {(r["collective"], r["size"], r["algorithm"]): r["runs"]
                 for r in doc["runs_as"] if r["p"] == doc["p"]})
    from mpiscope import mpilibs
    from mpiscope.engine.mpi import find_mpi
    from mpiscope.tune import probes
    mpi = find_mpi(mpi=doc["library"])
    lib = mpilibs.of(mpi)
    if not lib.reads_under_gdb(mpi) or mpi.version != doc["version"]:
        return {}, {}
    names = {c: T.usable(catalog, c, doc["p"]) for c in {c for c, _ in cells}}
    got = lib.read_defaults(mpi, probes.build(mpi, "collcall"), catalog, doc["p"], cells, names,
                            lambda forced: lib.forcing(catalog, forced))
    return got.default_runs, got.runs_as


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument("tunes", metavar="TUNE", type=Path, nargs="+",
                    help="an exhaustive tune's output directory (tune.json, runs/), or a tune "
                         "reduced by tests/tune_replay.py (tests/data/tune-replay/*.json)")
    ap.add_argument("--repeat", type=int, default=3, help="the tune's --repeat (default %(default)s)")
    ap.add_argument("--pingpong", metavar="RUN", type=Path,
                    help="a run with pingpong on the tune's machine: the guided search's costs for "
                         "a tune directory (without it, a directory is replayed adaptive only)")
    args = benchjson.parse(ap)
    setups = [x for path in args.tunes
              for x in (stored_setups(path) if path.suffix == ".json" else [kept_setup(path, args.pingpong)])]
    gots = [replay_setup(x, args.repeat) for x in setups]
    shown = [comparison(gots), where_guided(gots)] + [t for got in gots for t in tables_of(got)]
    names = {"openmpi": "Open MPI", "mpich": "MPICH"}
    mpi = sorted({f"{names.get(g['library'], g['library'])} {g['version']}" for g in gots})
    benchjson.write(args, "tune_search_replay", shown, {"replays": gots, "totals": totals(gots)}, mpi=mpi)


if __name__ == "__main__":
    main()
