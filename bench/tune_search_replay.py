"""The adaptive tune search replayed on an exhaustive tune's own measurements.

`bench/tune_fe.py adaptive` compares an adaptive tune with an exhaustive one
measured separately, so its agreement mixes two things: what the search
loses by not measuring every cell, and run-to-run noise. This script takes
one exhaustive tune kept with `--keep` (its tune.json and runs/), and runs
the search again offline with the measurements served from those runs
(each cell's launches as they were measured): cells measured and agreement
with the exhaustive decisions then count the search's loss alone.
`bench/tune_fe.py adaptive` prints this replay of its own exhaustive run too.

    .venv/bin/python bench/tune_search_replay.py KEEP/<cluster>-full

No MPI and no cluster: seconds. Prints the cells the search measured, the
decisions that differ, and the sizes measured per collective.
"""

import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace

from mpiscope.store.ingest import load
from mpiscope.store.series import all_series_samples
from mpiscope.tune import tuner as T
from mpiscope.tune.default_probe import representatives, same_code
from mpiscope.tune.discover import DEFAULT, Algorithm, Catalog
from mpiscope.tune.measure import Samples


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


def replayed(stored: Samples):
    """measure_jobs serving every job from the stored launches."""
    def measure_jobs(plan, catalog, jobs, samples, repeat=1, say=print):
        for coll, pairs in jobs.items():
            for name, sizes in pairs:
                for size in sizes:
                    for launch, values in stored.values.get((coll, name, size), []):
                        samples.add(coll, name, size, values, launch)
    return measure_jobs


def replay(keep: Path, repeat: int = 3) -> list:
    """The adaptive search run again on the exhaustive tune kept in `keep`
    (measured with --repeat `repeat`):
    the lines to print (cells, agreement, differences, sizes per collective).
    Exits with a message when `keep` holds no exhaustive tune."""
    if not (keep / "tune.json").exists() or not (keep / "runs").is_dir():
        sys.exit(f"{keep}: no tune.json and runs/ here; give the output directory of a "
                 "tune run with --exhaustive (bench/tune_fe.py adaptive --keep DIR keeps one)")
    doc = json.loads((keep / "tune.json").read_text())
    if doc["cells"]["measured"] != doc["cells"]["exhaustive"]:
        sys.exit(f"{keep}: this tune measured {doc['cells']['measured']} of "
                 f"{doc['cells']['exhaustive']} cells; replaying needs an exhaustive one")
    measure_jobs = T.measure_jobs
    T.measure_jobs = replayed(stored_samples(keep / "runs"))
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
        t = T.Tuner(plan, catalog, cfg, None, say=lambda *_: None)
        t.default_runs, t.runs_as = runs, runs_as
        t.search()
        return t

    try:
        full, adap = search(False), search(True)
    finally:
        T.measure_jobs = measure_jobs
    cells = [(c, s) for c in colls for s in full.sizes_of(c)]
    differ = [k for k in cells if full.winners.get(k, DEFAULT) != adap.winners.get(k, DEFAULT)]
    # a rule naming an algorithm that runs the same code as the other's choice is the same rule
    reps = representatives(runs, runs_as)
    unlike = [k for k in differ if not same_code(reps, *k, full.winners.get(k, DEFAULT),
                                                 adap.winners.get(k, DEFAULT))]
    counts = adap.cell_counts()
    m, e = counts["measured"], full.cell_counts()["measured"]
    lines = [f"{doc['library']} {doc['version']}, p={doc['p']}: the adaptive search measured {m} of "
             f"{e} cells ({100 * m / e:.0f}%; {counts['same_as_default']} had the default's launches, "
             f"{counts['same_code']} another algorithm's (the same code there), "
             f"{counts['skipped_by_models']} left out by the cost models, "
             f"{counts['out_of_reach']} out of reach of a verdict); its decisions run the same "
             f"code as the exhaustive ones on {len(cells) - len(unlike)} of {len(cells)} "
             f"({100 * (len(cells) - len(unlike)) / len(cells):.0f}%; the same name on "
             f"{len(cells) - len(differ)})"]
    lines.append(same_check(doc, runs))
    for k in differ:
        lines.append(f"  {k[0]} {k[1]} B: exhaustive {full.winners.get(k, DEFAULT)}, adaptive "
                     f"{adap.winners.get(k, DEFAULT)}" + ("" if k in unlike else " (the same code)"))
    for c in colls:
        by = {}
        for s, n in adap.measured[c]:
            by[s] = by.get(s, 0) + 1
        lines.append(f"  {c} ({len(full.names[c])} with the default), algorithms measured per size: "
                     + " ".join(f"{s}:{by.get(s, 0)}" for s in full.sizes_of(c)))
    return lines


def same_check(doc, runs) -> str:
    """What the exhaustive tune, which measured both, said of each cell where
    the default runs an algorithm exactly as forced: the same code twice, so
    its verdicts should be 'same' but for the tests' false alarms."""
    verdicts = {}
    for d in doc["decisions"]:
        name, exact = runs.get((d["collective"], d["size"]), (None, False))
        for r in d["rows"] if exact else []:
            if r["algorithm"] == name:
                verdicts[r.get("verdict")] = verdicts.get(r.get("verdict"), 0) + 1
    n = sum(verdicts.values())
    return (f"  the exhaustive tune's verdicts on the {n} cells where the default runs the forced "
            "algorithm exactly, forced against default: "
            + (", ".join(f"{k} {v}" for k, v in sorted(verdicts.items(), key=str)) or "none"))


def reading(doc, catalog, cells) -> tuple:
    """(default_runs, runs_as): the algorithm the default runs at each cell
    and whether exactly as forced, and the forced algorithms that run another
    configuration's code (default_probe.py). From the tune, or read now
    from this machine's Open MPI when it is the tune's version (tunes before
    default_probe.py read them did not keep them); else none."""
    if doc.get("default_runs") and "runs_as" in doc:
        return ({(r["collective"], r["size"]): (r["algorithm"], r["as_forced"])
                 for r in doc["default_runs"] if r["p"] == doc["p"]},
                {(r["collective"], r["size"], r["algorithm"]): r["runs"]
                 for r in doc["runs_as"] if r["p"] == doc["p"]})
    from mpiscope.engine.mpi import find_mpi
    from mpiscope.tune import default_probe
    from mpiscope.tune.measure import forcing_mca
    mpi = find_mpi(mpi=doc["library"])
    if doc["library"] != "openmpi" or not default_probe.available(mpi) or mpi.version != doc["version"]:
        return {}, {}
    names = {c: T.usable(catalog, c, doc["p"]) for c in {c for c, _ in cells}}
    got = default_probe.read_cells(mpi, catalog, doc["p"], cells, names,
                                   lambda forced: forcing_mca(catalog, forced))
    return got.default_runs, got.runs_as


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("keep", type=Path, help="an exhaustive tune's output directory (tune.json, runs/)")
    ap.add_argument("--repeat", type=int, default=3, help="the tune's --repeat (3)")
    args = ap.parse_args()
    print("\n".join(replay(args.keep, args.repeat)))


if __name__ == "__main__":
    main()
