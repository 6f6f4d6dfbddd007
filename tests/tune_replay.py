# SPDX-License-Identifier: BSD-3-Clause
"""Stored launches of a tune, replayed through the tuner without MPI.

A tune's launches (its runs/) are reduced to a small JSON file: per launch,
the communicator size, what it was (a measurement forcing one algorithm per
collective, or the verification's default / tuned launch) and, per cell, seven
order statistics of its samples. `Replay` serves them to the tuner in place
of MPI: a launch's cells get the next stored launch of the same kind at the
cell (measurement launches by the algorithm forced; the verification's forced
launches from the measurement ones), in turn, from the first again when they
run out; a launch forcing an algorithm none of whose launches completed in
the tune fails, as it did there.

Reduce a tune's output directory (it must have measured every cell:
--exhaustive), with the pingpong medians of a run on the same machine where
one is given (the guided search's costs), with

    .venv/bin/python tests/tune_replay.py TUNE_DIR tests/data/tune-replay/NAME.json [PINGPONG_RUN_DIR]
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from mpiscope.mpilibs.algorithm_catalog import Algorithm, Catalog
from mpiscope.mpilibs.library import Reading
from mpiscope.tune.measure import Launches

KEEP = 7  # order statistics kept of each cell of a launch


def _reduced(values) -> list:
    v = np.sort(np.asarray(values, dtype=float))
    picks = v[np.round(np.linspace(0, len(v) - 1, min(KEEP, len(v)))).astype(int)]
    return [float(f"{x:.4g}") for x in picks]


def _kind(label: str):
    """(kind, {collective: name}) of a launch's label ("allreduce=ring, bcast=default",
    "verify default", "verify tuned", "verify forced", "own algorithms")."""
    if label.startswith("verify"):
        return label, {}
    if label.startswith("own"):
        return None, {}
    return "measure", dict(part.split("=", 1) for part in label.split(", "))


def _trimmed_catalog(catalog: Catalog, colls) -> dict:
    """The catalog's fields, the library's own selection tree (MPICH) cut to `colls`."""
    tree = {k: v for k, v in (catalog.default_tree or {}).items()
            if k.split("=", 1)[1] in colls} or None
    text = json.dumps(tree or {})
    containers = sorted(c for c in catalog.containers
                        if f"algorithm={c}" in text or any(a.container == c for x in colls
                                                           for a in catalog.algorithms.get(x, [])))
    return {"library": catalog.library, "version": catalog.version, "source": catalog.source,
            "algorithms": {c: [[a.name, a.value, a.container] for a in catalog.algorithms[c]]
                           for c in colls},
            "excluded_components": catalog.excluded_components, "default_tree": tree,
            "containers": containers, "device_override": catalog.device_override,
            "device_percoll": sorted(catalog.device_percoll & set(colls)),
            "rule_params": {c: list(v) for c, v in catalog.rule_params.items() if c in colls}}


def pingpong_medians(run_dir: Path) -> dict:
    """{size: median seconds} of a run's pingpong: the machine's point-to-point
    costs, which the guided search simulates with."""
    from mpiscope.store.ingest import load
    from mpiscope.store.series import all_series_samples

    table, run = load(run_dir)
    return {str(int(size)): float(f"{np.median(s.values):.4g}")
            for bench, _algo, size, s in all_series_samples(table, run) if bench == "pingpong" and len(s.values)}


def reduce(tune_dir: Path, pingpong: Path | None = None) -> dict:
    """The stored launches of the tune in `tune_dir`, with its library's catalog
    (and the pingpong medians of the run `pingpong` on the same machine)."""
    from mpiscope.engine.mpi import find_mpi
    from mpiscope.store.ingest import load
    from mpiscope.store.series import all_series_samples
    from mpiscope.tune.discover import discover

    doc = json.loads((tune_dir / "tune.json").read_text())
    colls = list(dict.fromkeys(d["collective"] for d in doc["decisions"]))
    mpi = find_mpi(mpi=doc["library"])
    assert mpi.version == doc["version"], "reduce on the machine whose library the tune used"
    launches = []
    runs = [d for d in (tune_dir / "runs").iterdir() if (d / "context.json").is_file()]
    for run_dir in sorted(runs, key=lambda d: (json.loads((d / "context.json").read_text())["created"],
                                               d.name)):
        context = json.loads((run_dir / "context.json").read_text())
        kind, names = _kind(context["command"][2])
        if kind is None:
            continue
        table, run = load(run_dir)
        cells = {}
        for bench, _algo, size, s in all_series_samples(table, run):
            if len(s.values):
                cells.setdefault(bench, {})[str(int(size))] = _reduced(s.values)
        launches.append({"p": context["plan"]["np"], "kind": kind, "names": names, "cells": cells})
    return {"tune": {k: doc[k] for k in ("library", "version", "ps")},
            "collectives": colls,
            "sizes": sorted({d["size"] for d in doc["decisions"] if d["collective"] != "barrier"}),
            "catalog": _trimmed_catalog(discover(mpi), colls),
            "default_runs": doc["default_runs"], "runs_as": doc["runs_as"],
            "launches": launches, **({"pingpong": pingpong_medians(pingpong)} if pingpong else {})}


def catalog_of(stored: dict, version: str | None = None) -> Catalog:
    c = stored["catalog"]
    return Catalog(c["library"], version or c["version"],
                   {coll: [Algorithm(*a) for a in algs] for coll, algs in c["algorithms"].items()},
                   c["source"], excluded_components=c["excluded_components"],
                   default_tree=c["default_tree"], containers=frozenset(c["containers"]),
                   device_override=c["device_override"],
                   device_percoll=frozenset(c["device_percoll"]),
                   rule_params={k: tuple(v) for k, v in c["rule_params"].items()})


def reading(stored: dict, p: int) -> Reading:
    """What the default runs on p ranks, as the tune read it under gdb."""
    return Reading({(r["collective"], r["size"]): (r["algorithm"], r["as_forced"])
                    for r in stored["default_runs"] if r["p"] == p},
                   {(r["collective"], r["size"], r["algorithm"]): r["runs"]
                    for r in stored["runs_as"] if r["p"] == p})


class Replay(Launches):
    """Serves the stored launches in place of MPI. A launch forcing an
    algorithm of which no launch was stored (it failed in the tune) fails
    as a whole, as it did. `slower`: {(p, collective, size): factor}: there
    the verification's tuned launches are the default's launches times the
    factor (a rule that makes the cell slower). `once`: each stored launch
    of a cell is served once at most, and a launch asked beyond them gives
    that cell nothing, as a failed one (a search then never has more
    launches of a cell than the tune measured)."""

    def __init__(self, stored: dict, slower=None, once=False):
        super().__init__(catalog_of(stored))
        self.pool, self.used, self.slower, self.once = {}, {}, slower or {}, once
        for x in stored["launches"]:
            for coll, by_size in x["cells"].items():
                name = x["names"].get(coll) if x["kind"] == "measure" else x["kind"]
                for size, values in by_size.items():
                    key = (x["p"], x["kind"], coll, name, int(size))
                    self.pool.setdefault(key, []).append(np.array(values))
        self.stored = {key[:4] for key in self.pool}
        self.calls = []

    @staticmethod
    def _key(p, label, coll, name):
        if label in ("verify default", "verify tuned"):
            return p, label, coll, label
        return p, "measure", coll, name

    def _next(self, key):
        got = self.pool.get(key)
        assert got, f"no stored launch for {key}"
        k = self.used.get(key, 0)
        self.used[key] = k + 1
        return np.empty(0) if self.once and k >= len(got) else got[k % len(got)]

    def values(self, p, label, coll, name, size):
        if label == "verify tuned" and (p, coll, size) in self.slower:
            return self.slower[(p, coll, size)] * self._next((p, "verify default", coll,
                                                              "verify default", size))
        return self._next((*self._key(p, label, coll, name), size))

    def launch(self, plan, cells, label, samples, names, extra=None, plain=False):
        """One launch, as Launches.launch records it."""
        self.calls.append((plan.np, label, {c: names[c] for c in cells}, extra, plain))
        samples.runs.append(f"replay-{len(self.calls)}")
        launch_id = len(samples.runs)
        never = [f"{c}={names[c]}" for c in cells if self._key(plan.np, label, c, names[c])
                 not in self.stored]
        if never:
            samples.failures.append((label, f"{', '.join(never)} failed in the tune replayed"))
            return
        for coll, sizes in cells.items():
            for size in (sizes if coll != "barrier" else [0]):
                values = self.values(plan.np, label, coll, names[coll], size)
                if len(values):
                    samples.add(coll, names[coll], size, values, launch_id)


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    reduced = reduce(Path(sys.argv[1]), Path(sys.argv[3]) if len(sys.argv) == 4 else None)
    Path(sys.argv[2]).write_text(json.dumps(reduced, separators=(",", ":")) + "\n")
