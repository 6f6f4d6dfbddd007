# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope tune` on an emulated Fast Ethernet cluster, against its targets.
Three measurements, one per run of this script (WHAT):

- `tune`: a tune of the collectives (--coll) at --sizes on --layout hosts x
  slots (8x1 or 4x2) with --mpi (Open MPI or MPICH), verified by
  default/tuned launch pairs. Tables: the cells measured of the grid (and
  why the others were left out); every verified cell's rule, speed-up
  default/tuned with its 95% CI, launches and verdict; and the summary: the
  geometric mean of default/tuned over all cells and over the cells with a
  rule, the cells slower than 0.97 beyond noise (Holm-corrected verdict and
  the interval below 0.97; and the interval alone, uncorrected), whether
  the file was verified as in effect, and the rules withdrawn.
  Targets: geometric mean over the tuned cells >= 1.2; no cell slower than
  0.97 beyond noise; every file verified as loaded.
- `adaptive`: the same tune with --exhaustive and adaptive, one after the
  other on the same emulated cluster. Tables: the adaptive tune's as for
  `tune`; the cells measured against the exhaustive grid and the agreement
  of the decisions (the same code; the same name; counting as agreeing a
  choice the exhaustive run's own CIs cannot tell from its winner: two
  separate measurements, so noise counts against the agreement) and the
  cells where they differ; the adaptive search replayed on the exhaustive
  run's own launches (bench/tune_search_replay.py: what the search alone
  loses, without run-to-run noise); and the two runs' measurements decided
  again by each rule, samples pooled and launch as the unit.
  Targets: cells measured <= 40% of the exhaustive grid; agreement >= 95%.
- `fig629`: the case of Hamid (2008) figure 6.29, bcast over 8 hosts on a
  link with alpha = 90 us and 180 B/us (1.5 Gbit/s, --delay us one way):
  the binomial and scatter-allgather medians per size, and the measured
  change-over from binomial to scatter-allgather against the Hockney
  model's. Target: within one size step.

Needs root (emulated clusters are network namespaces); no peer tool.

To reproduce (as root; `tune` takes tens of minutes, `adaptive` about twice
as long, `fig629` about ten minutes):

    .venv/bin/python bench/tune_fe.py tune --mpi openmpi --layout 8x1 --json tune-fe-openmpi-8x1.json
    .venv/bin/python bench/tune_fe.py adaptive --mpi openmpi --layout 8x1 --keep DIR --json tune-fe-adaptive.json
    .venv/bin/python bench/tune_fe.py adaptive --search guided --mpi openmpi --layout 8x1 --json tune-fe-guided.json
    .venv/bin/python bench/tune_fe.py fig629 --json tune-fe-fig629.json
"""

import json
import math
import re
import os
import subprocess
import sys
import shutil
import tempfile
import time
from pathlib import Path

from mpiscope.cluster import manager
from mpiscope.cluster.spec import make_spec
from mpiscope.models.costmodels.base import Costs
from mpiscope.models.costmodels import predict_time
from mpiscope.tune.readings import representatives, same_code
import benchjson
import tune_search_replay
from tune_search_replay import replay

PY = [sys.executable, "-m", "mpiscope.cli"]
DEFAULT_SIZES = "8-256K:x4"


class Cluster:
    def __init__(self, label, hosts, slots, **kw):
        self.name = f"tb{os.getpid() % 10000}{label}"
        self.spec = make_spec(self.name, hosts, slots=slots, **kw)

    def __enter__(self):
        manager.up(self.spec)
        return self.name

    def __exit__(self, *exc):
        manager.teardown(self.name)


KEEP = None  # --keep DIR: every tune's output directory is copied there


def tune(cluster, mpi, out, *extra):
    cmd = PY + ["tune", "--cluster", cluster, "--mpi", mpi, "-o", str(out), "--json", *extra]
    print("$", " ".join(cmd[2:]), flush=True)
    start = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)   # its progress: our stderr
    print(f"  ({time.monotonic() - start:.0f} s)", flush=True)
    if KEEP:
        shutil.copytree(out, Path(KEEP) / f"{cluster}-{Path(out).name}", dirs_exist_ok=True)
    if p.stdout.strip().startswith("{"):
        return json.loads(p.stdout)
    sys.exit(f"tune failed (exit {p.returncode}), its messages above")


def _pingpong(cluster, args, root: Path) -> Path:
    """A pingpong run on the cluster at the tune's sizes: the guided search's
    costs (tune --search guided --from-run)."""
    cmd = PY + ["run", "--cluster", cluster, "--mpi", args.mpi, "--bench", "pingpong", "--sizes",
                args.sizes, "--time-budget", str(args.time_budget), "--out", str(root), "--label", "pingpong"]
    print("$", " ".join(cmd[2:]), flush=True)
    if subprocess.run(cmd).returncode != 0:
        sys.exit("the pingpong run failed, its messages above")
    run = next(d for d in root.iterdir() if (d / "context.json").exists())
    if KEEP:  # with it, bench/tune_search_replay.py DIR/<cluster>-full --pingpong replays the guided search
        shutil.copytree(run, Path(KEEP) / f"{cluster}-pingpong", dirs_exist_ok=True)
    return run


def summary(doc):
    """A verified tune's tables (cells, verified cells, summary) and its numbers."""
    v = doc["verification"]
    cells = [c for c in v["cells"] if c.get("speedup")]
    show, c0 = benchjson.show, doc["cells"]
    tables = [show("cells of the grid", ["measured", "exhaustive", "given the default's launches",
                                         "given another algorithm's (same code)", "left out by the cost models",
                                         "out of reach of a verdict"],
                   [[c0["measured"], c0["exhaustive"], c0.get("same_as_default", 0), c0.get("same_code", 0),
                     c0.get("skipped_by_models", 0), c0.get("out_of_reach", 0)]])]
    tables.append(show("verified cells: speed-up default / tuned", ["collective", "size B", "rule", "speed-up",
                                                                     "CI low", "CI high", "launches", "verdict"],
                       [[c["collective"], c["size"], c["rule"], c["speedup"], c["speedup_low"], c["speedup_high"],
                         "/".join(map(str, c.get("launches", []))) or None, c["verdict"]] for c in cells]))
    tuned = [c for c in cells if c["rule"] != "default"]
    gm_tuned = (math.exp(sum(math.log(c["speedup"]) for c in tuned) / len(tuned))
                if tuned else None)
    # beyond noise: the verdict, corrected for the number of cells (Holm), and the 95% interval
    slow = [c for c in cells if c["verdict"] == "tuned slower" and c["speedup_high"] < 0.97]
    per_cell = [c for c in cells if c["speedup_high"] < 0.97]
    tables.append(show(
        "summary", ["geometric mean, all cells", "cells with a rule", "geometric mean, cells with a rule",
                    "slower than 0.97 beyond noise", "interval below 0.97, uncorrected", "cells",
                    "file in effect", "checked by", "withdrawn", "last withdrawal verified"],
        [[v["geomean_speedup"], len(tuned), gm_tuned, len(slow), len(per_cell), len(cells),
          str(v["file_in_effect"]), v["checked_by"], len(doc["withdrawn"]), str(v["last_withdrawal_verified"])]],
        ["targets: geometric mean over the cells with a rule >= 1.2; none slower than 0.97 beyond noise; "
         "the file in effect"]))
    return tables


def cmd_tune(args):
    hosts, slots = map(int, args.layout.split("x"))
    with Cluster("t", hosts, slots, preset="fast-ethernet") as name, \
            tempfile.TemporaryDirectory() as tmp:
        doc = tune(name, args.mpi, Path(tmp) / "t", "--sizes", args.sizes, "--coll", args.coll,
                   "--time-budget", str(args.time_budget), "--repeat", str(args.repeat),
                   "--verify-repeat", str(args.verify_repeat),
                   *(["--skip", args.skip] if args.skip else []))
        print(f"\n{args.mpi} {doc['version']} on {args.layout} Fast Ethernet\n")
        return summary(doc), {"tune": doc}


def cmd_adaptive(args):
    hosts, slots = map(int, args.layout.split("x"))
    with Cluster("a", hosts, slots, preset="fast-ethernet") as name, \
            tempfile.TemporaryDirectory() as tmp:
        common = ["--sizes", args.sizes, "--coll", args.coll, "--time-budget",
                  str(args.time_budget), "--repeat", str(args.repeat),
                  *(["--skip", args.skip] if args.skip else [])]
        full = tune(name, args.mpi, Path(tmp) / "full", "--exhaustive", "--verify-repeat", "1",
                    *common)
        pingpong = _pingpong(name, args, Path(tmp) / "runs") if args.search == "guided" else None
        guided = ["--search", "guided", "--from-run", str(pingpong)] if pingpong else ["--search", "adaptive"]
        adap = tune(name, args.mpi, Path(tmp) / "adap", "--verify-repeat",
                    str(args.verify_repeat), *guided, *common)
        side_by_side = {pooled: (_decisions(Path(tmp) / "full", pooled),
                                 _decisions(Path(tmp) / "adap", pooled)) for pooled in (True, False)}
        replayed = replay(Path(tmp) / "full", args.repeat, pingpong)
    print(f"\n{args.mpi} {adap['version']} on {args.layout} Fast Ethernet, adaptive (verified "
          f"with {args.verify_repeat} default/tuned pairs)\n")
    tables = summary(adap)
    a, f = searched(adap), searched(full)
    same = same_choice(adap)
    agree = sum(same(k, a[k], f[k]) for k in f) / len(f)
    ties = sum(same(k, a[k], f[k]) or _tied(full, k, a[k]) for k in f) / len(f)
    show = benchjson.show
    tables.append(show(
        "adaptive against exhaustive (the searches' decisions, before any withdrawal)",
        ["cells measured, adaptive", "exhaustive", "measured %", "cells", "same code %", "same name %",
         "same code or tied %", "not the default, exhaustive", "not the default, adaptive"],
        [[adap["cells"]["measured"], full["cells"]["measured"],
          100 * adap["cells"]["measured"] / full["cells"]["measured"], len(f), 100 * agree,
          100 * sum(a[k] == f[k] for k in f) / len(f), 100 * ties, sum(w != "default" for w in f.values()),
          sum(w != "default" for w in a.values())]],
        ["tied: a different choice the exhaustive run's own CIs cannot tell from its winner",
         "targets: cells measured <= 40% of the exhaustive grid; agreement >= 95%"]))
    differ = [[k[0], k[2], f[k], a[k], "the same code" if same(k, a[k], f[k]) else
               "tied in the exhaustive data" if _tied(full, k, a[k]) else ""] for k in f if a[k] != f[k]]
    if differ:
        tables.append(show("cells where the decisions differ", ["collective", "size B", "exhaustive", "adaptive",
                                                                "note"], differ))
    print("the adaptive search replayed on the exhaustive run's own launches (what the search alone loses, "
          "without the run-to-run noise; bench/tune_search_replay.py):\n")
    tables += tune_search_replay.tables(replayed)
    both_rows = []
    for pooled, (fd, ad) in side_by_side.items():
        both = [k for k in fd if k in ad]
        both_rows.append(["pooled samples (one launch per cell)" if pooled else "launch as the unit",
                          sum(fd[k] == ad[k] for k in both), len(both), sum(v != "default" for v in fd.values()),
                          sum(ad[k] != "default" for k in both)])
    tables.append(show("the two runs' measurements decided again by each rule (cells measured in both)",
                       ["rule", "agree", "cells", "not the default, exhaustive", "not the default, adaptive"],
                       both_rows))
    return tables, {"exhaustive": full, "adaptive": adap, "replay": replayed}


def searched(doc):
    """{(collective, p, size): winner} as the search decided, before the
    verification withdrew any rule: what the two searches are compared on
    (the exhaustive run verifies with one launch pair, whose pooled verdicts
    withdraw rules the adaptive run's three pairs keep)."""
    out = {(x["collective"], x.get("p"), x["size"]): x["winner"] for x in doc["decisions"]}
    for w in doc["withdrawn"]:
        out[(w["collective"], w.get("p"), w["size"])] = w["algorithm"]
    return out


def _decisions(out, pooled):
    """{(collective, size): winner} decided again from a tune's stored runs,
    every launch's samples pooled into one (the rule without launches) or
    kept apart (launch as the unit)."""
    import numpy as np
    from mpiscope.store.ingest import load
    from mpiscope.store.series import all_series_samples
    from mpiscope.tune.decide import decide
    from mpiscope.tune.cell_samples import Samples

    samples, names = Samples(), {}
    for i, run_dir in enumerate(sorted(p for p in (out / "runs").iterdir() if p.is_dir()
                                       and (p / "context.json").exists())):
        label = json.loads((run_dir / "context.json").read_text())["command"][-1]
        if "=" not in label or label.startswith("verify"):
            continue
        forced = dict(kv.split("=") for kv in label.split(", "))
        table, run = load(run_dir)
        for bench, _algo, size, smp in all_series_samples(table, run):
            samples.add(bench, forced[bench], int(size), smp.values, launch=0 if pooled else i)
            names.setdefault(bench, ["default"])
            if forced[bench] not in names[bench]:
                names[bench].append(forced[bench])
    rng, out_ = np.random.default_rng(1), {}
    for c, ns in names.items():
        for s in sorted({k[2] for k in samples.values if k[0] == c}):
            here = [n for n in ns if len(samples.get(c, n, s))]
            out_[(c, s)] = decide(samples, c, s, here, rng, 0.02, 0.05)[0]
    return out_


def same_choice(doc):
    """same(key, a, b): whether rules choosing a and b at key (collective, p,
    size) run the same code, as the tune read it under gdb (default_runs,
    runs_as; readings.same_code)."""
    reps = {}
    for p in doc.get("ps") or [doc["p"]]:
        runs = {(r["collective"], r["size"]): (r["algorithm"], r["as_forced"])
                for r in doc.get("default_runs", []) if r["p"] == p}
        runs_as = {(r["collective"], r["size"], r["algorithm"]): r["runs"]
                   for r in doc.get("runs_as", []) if r["p"] == p}
        reps[p] = representatives(runs, runs_as)
    return lambda key, a, b: same_code(reps.get(key[1], {}), key[0], key[2], a, b)


def _tied(doc, key, other):
    """In the exhaustive run's own measurements of cell `key`, the ratio-to-default
    CIs of its winner and of `other` overlap (the default's is [1, 1])."""
    d = next(x for x in doc["decisions"]
             if (x["collective"], x.get("p"), x["size"]) == key)
    ci = {r["algorithm"]: (r.get("ratio_low", 1.0), r.get("ratio_high", 1.0)) for r in d["rows"]}
    if d["winner"] not in ci or other not in ci:
        return False
    (a_lo, a_hi), (b_lo, b_hi) = ci[d["winner"]], ci[other]
    return a_lo <= b_hi and b_lo <= a_hi


def cmd_fig629(args):
    # α = 90 µs, 180 B/µs: 1.44 Gbit/s payload needs ≈ 1.5 Gbit/s on the line.
    alpha, bw = 90e-6, 180e6
    with Cluster("f", 8, 1, link=f"rate=1500mbit,delay={args.delay}us") as name, \
            tempfile.TemporaryDirectory() as tmp:
        sizes = "2K-512K:x2" if args.sizes == DEFAULT_SIZES else args.sizes  # around the model's
        doc = tune(name, "openmpi", Path(tmp) / "f", "--coll", "bcast", "--exhaustive",
                   "--sizes", sizes, "--time-budget", str(args.time_budget),
                   "--verify-repeat", "1", "--skip", ",".join(
                       ["basic_linear", "chain", "pipeline", "split_binary_tree", "binary_tree",
                        "knomial", "scatter_allgather_ring"]))
    seq = []
    for d in doc["decisions"]:
        med = {r["algorithm"]: r["median_s"] for r in d["rows"]}
        if "binomial" in med and "scatter_allgather" in med:
            seq.append((d["size"], med["binomial"], med["scatter_allgather"]))
    show = benchjson.show
    tables = [show(f"bcast, 8 hosts, alpha = 90 us, 180 B/us (delay {args.delay} us)",
                   ["size B", "binomial us", "scatter-allgather us"],
                   [[size, b * 1e6, sa * 1e6] for size, b, sa in seq])]
    measured = next((s for s, b, sa in seq if sa < b), None)
    costs = Costs.hockney(alpha, 1 / bw)
    model = _model_crossover(costs)
    sizes = [s for s, _, _ in seq]
    steps = (abs(math.log2(measured) - math.log2(model)) / math.log2(sizes[1] / sizes[0])
             if measured and model and len(sizes) > 1 else None)
    tables.append(show("change-over from binomial to scatter-allgather",
                       ["measured B", "Hockney model B", "size steps apart"], [[measured, model, steps]],
                       [f"grid: {sizes}", "target: within 1 size step"]))
    return tables, {"tune": doc, "measured_crossover": measured, "model_crossover": model, "steps": steps}


def _model_crossover(costs, p=8):
    """The first size at which the model's scatter-allgather (recursive doubling,
    Open MPI's scatter_allgather) beats binomial, by bisection."""
    def sa_wins(n):
        return (predict_time("bcast", "scatter_allgather_recursive_doubling", n, p, costs)
                < predict_time("bcast", "binomial", n, p, costs))
    lo, hi = 1, 1 << 30
    if not sa_wins(hi):
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if sa_wins(mid) else (mid, hi)
    return hi


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument("what", choices=("tune", "adaptive", "fig629"), help="which measurement (see above)")
    ap.add_argument("--mpi", default="openmpi", choices=("openmpi", "mpich"),
                    help="the MPI tuned (default %(default)s; fig629 always Open MPI)")
    ap.add_argument("--layout", default="8x1", help="hosts x slots: 8x1 or 4x2 (default %(default)s)")
    ap.add_argument("--coll", default="allreduce,bcast,reduce,allgather,alltoall,"
                                      "reduce_scatter_block,gather,scatter,barrier",
                    help="collectives tuned (tune --coll; default %(default)s)")
    ap.add_argument("--sizes", default=DEFAULT_SIZES,
                    help=f"message sizes (tune --sizes; default {DEFAULT_SIZES}, fig629 2K-512K:x2)")
    ap.add_argument("--time-budget", type=float, default=0.3,
                    help="seconds at most per series (tune --time-budget; default %(default)s)")
    ap.add_argument("--skip", default="", help="algorithm names never forced (passed to tune)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds of launches (tune --repeat; default %(default)s)")
    ap.add_argument("--verify-repeat", type=int, default=3,
                    help="default/tuned launch pairs of the verification (tune --verify-repeat; default "
                         "%(default)s)")
    ap.add_argument("--delay", type=float, default=70.0,
                    help="fig629: one-way delay added, us (default %(default)s)")
    ap.add_argument("--search", choices=("adaptive", "guided"), default="adaptive",
                    help="adaptive: the tune's search against the exhaustive one (default); guided: "
                         "--search guided, its costs from a pingpong run on the cluster first")
    ap.add_argument("--keep", metavar="DIR", help="copy every tune's output directory (and the guided "
                    "search's pingpong run) into DIR")
    args = benchjson.parse(ap)
    if not re.fullmatch(r"[1-9][0-9]*x[1-9][0-9]*", args.layout):
        ap.error(f"--layout: hosts x slots, e.g. 8x1 or 4x2, got '{args.layout}'")
    if os.geteuid() != 0:
        sys.exit("emulated clusters need root")
    global KEEP
    KEEP = args.keep
    tables, results = {"tune": cmd_tune, "adaptive": cmd_adaptive, "fig629": cmd_fig629}[args.what](args)
    mpi = "openmpi" if args.what == "fig629" else args.mpi
    benchjson.write(args, "tune_fe", tables, results,
                    mpi=benchjson.mpi_names({"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}[mpi]))


if __name__ == "__main__":
    main()
