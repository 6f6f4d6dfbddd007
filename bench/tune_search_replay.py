# SPDX-License-Identifier: BSD-3-Clause
"""The adaptive tune search replayed on an exhaustive tune's own measurements.

`bench/tune_fe.py adaptive` compares an adaptive tune with an exhaustive one
measured separately, so its agreement mixes two things: what the search
loses by not measuring every cell, and run-to-run noise. This script takes
one exhaustive tune's output directory (its tune.json and runs/, e.g. kept
by `bench/tune_fe.py adaptive --keep DIR` as DIR/<cluster>-full), and runs
the search again offline with the measurements served from those runs
(each cell's launches as they were measured): the cells measured and the
agreement with the exhaustive decisions then count the search's loss alone.
`bench/tune_fe.py adaptive` prints this replay of its own exhaustive run too.

The tables give: the cells the adaptive search measured of the exhaustive
grid (and why it left the others out) and on how many cells its decisions
run the same code as the exhaustive ones (and have the same name); the
exhaustive tune's own verdicts where the default runs the forced algorithm
exactly (the same code twice: 'same' is expected but for false alarms);
the decisions that differ; and the algorithms measured per size of each
collective.

No MPI and no cluster (except that, for an Open MPI tune that did not
record which algorithm its default runs, that is read from the installed
Open MPI when it is the tune's version): seconds.

To reproduce:

    .venv/bin/python bench/tune_search_replay.py DIR/<cluster>-full --repeat 3 --json tune-search-replay.json
"""

import json
import sys
from pathlib import Path
from types import SimpleNamespace

import benchjson
from mpiscope.store.ingest import load
from mpiscope.store.series import all_series_samples
from mpiscope.mpilibs.algorithm_catalog import DEFAULT, Algorithm, Catalog
from mpiscope.mpilibs.library import Reading
from mpiscope.tune import tuner as T
from mpiscope.tune.measure import Launches
from mpiscope.tune.readings import representatives, same_code
from mpiscope.tune.cell_samples import Samples


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


def replay(keep: Path, repeat: int = 3) -> dict:
    """The adaptive search run again on the exhaustive tune kept in `keep`
    (measured with --repeat `repeat`): its numbers (cells, agreement,
    differences, sizes per collective; see tables()).
    Exits with a message when `keep` holds no exhaustive tune."""
    if not (keep / "tune.json").exists() or not (keep / "runs").is_dir():
        sys.exit(f"{keep}: no tune.json and runs/ in it; give the output directory of a "
                 "tune run with --exhaustive (bench/tune_fe.py adaptive --keep DIR keeps one)")
    doc = json.loads((keep / "tune.json").read_text())
    if doc["cells"]["measured"] != doc["cells"]["exhaustive"]:
        sys.exit(f"{keep}: this tune measured {doc['cells']['measured']} of "
                 f"{doc['cells']['exhaustive']} cells; replaying needs an exhaustive one")
    launches = Replayed(stored_samples(keep / "runs"))
    catalog = Catalog(doc["library"], doc["version"],
                      {c: [Algorithm(a["name"], a["value"], a.get("container")) for a in algs]
                       for c, algs in doc["algorithms"].items()}, "replay")
    colls = list(dict.fromkeys(d["collective"] for d in doc["decisions"]))
    sizes = sorted({d["size"] for d in doc["decisions"] if d["collective"] != "barrier"})
    plan = SimpleNamespace(np=doc["p"], ppn=doc.get("ppn"), cluster=None)

    runs, runs_as = reading(doc, catalog, [(d["collective"], d["size"]) for d in doc["decisions"]
                                           if d["p"] == doc["p"]])

    def search(adaptive):
        cfg = T.TuneConfig(collectives=colls, sizes=sizes, adaptive=adaptive, repeat=repeat)
        t = T.Tuner(plan, catalog, cfg, launches, say=lambda *_: None)
        t.reading = Reading(runs, runs_as)
        t.search()
        return t

    full, adap = search(False), search(True)
    full_w, adap_w = full.decisions.winners, adap.decisions.winners
    cells = [(c, s) for c in colls for s in full.cfg.sizes_of(c)]
    differ = [k for k in cells if full_w.get(k, DEFAULT) != adap_w.get(k, DEFAULT)]
    # a rule naming an algorithm that runs the same code as the other's choice is the same rule
    reps = representatives(runs, runs_as)
    unlike = [k for k in differ if not same_code(reps, *k, full_w.get(k, DEFAULT),
                                                 adap_w.get(k, DEFAULT))]
    counts = adap.cell_counts()
    per_size = {}
    for c in colls:
        by = {}
        for s, n in adap.measured.cells[c]:
            by[s] = by.get(s, 0) + 1
        per_size[c] = {"algorithms": len(full.names[c]),
                       "measured": {s: by.get(s, 0) for s in full.cfg.sizes_of(c)}}
    return {"library": doc["library"], "version": doc["version"], "p": doc["p"],
            "measured": counts["measured"], "exhaustive": full.cell_counts()["measured"],
            "same_as_default": counts["same_as_default"], "same_code": counts["same_code"],
            "skipped_by_models": counts["skipped_by_models"], "out_of_reach": counts["out_of_reach"],
            "cells": len(cells), "agree_same_code": len(cells) - len(unlike),
            "agree_same_name": len(cells) - len(differ),
            "exact_default_verdicts": same_check(doc, runs),
            "differ": [{"collective": k[0], "size": k[1], "exhaustive": full_w.get(k, DEFAULT),
                        "adaptive": adap_w.get(k, DEFAULT), "same_code": k not in unlike} for k in differ],
            "per_size": per_size}


def tables(got: dict, show=benchjson.show) -> list:
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
    out.append(show("algorithms the adaptive search measured per size",
                    ["collective", "algorithms with the default", "size:measured"],
                    [[c, x["algorithms"], " ".join(f"{s}:{k}" for s, k in x["measured"].items())]
                     for c, x in got["per_size"].items()]))
    return out


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
    ap.add_argument("keep", metavar="DIR", type=Path,
                    help="an exhaustive tune's output directory (tune.json, runs/)")
    ap.add_argument("--repeat", type=int, default=3, help="the tune's --repeat (default %(default)s)")
    args = benchjson.parse(ap)
    got = replay(args.keep, args.repeat)
    library = {"openmpi": "Open MPI", "mpich": "MPICH"}.get(got["library"], got["library"])
    benchjson.write(args, "tune_search_replay", tables(got), got, mpi=[f"{library} {got['version']}"])


if __name__ == "__main__":
    main()
