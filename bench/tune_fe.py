"""mpiscope tune on an emulated Fast Ethernet cluster (README "Tuning the
library's collectives"), against the targets of issue 15:

- `tune`: 8 hosts × 1 slot, and 4 hosts × 2 slots, Open MPI and MPICH: the
  geometric mean of default/tuned over the tuned cells (target ≥ 1.2), the
  cells slower than 0.97 beyond noise (target none), whether every file was
  verified as loaded;
- `adaptive`: the same tune with --exhaustive and adaptive, one after the
  other on the same emulated cluster: cells measured (target ≤ 40% of the
  exhaustive grid) and agreement of the decisions (target ≥ 95%; two
  separate measurements, so noise counts against it: also printed, the
  agreement counting a choice the exhaustive run's own CIs cannot tell from
  its winner; and the adaptive search replayed on the exhaustive run's own
  launches, which counts what the search alone loses);
- `fig629`: seed 000 figure 6.29's case, bcast on a link with α = 90 µs and
  180 B/µs: the measured binomial → scatter-allgather change-over against
  the Hockney model's (target within one size step).

Root, and the heavy lock:
    flock /tmp/mpiscope-heavy.lock .venv/bin/python bench/tune_fe.py tune --mpi openmpi --layout 8x1
"""

import argparse
import json
import math
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
from mpiscope.tune.default_probe import representatives, same_code
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


def summary(doc):
    v = doc["verification"]
    cells = [c for c in v["cells"] if c.get("speedup")]
    print(f"  cells measured {doc['cells']['measured']} of {doc['cells']['exhaustive']} "
          f"({doc['cells'].get('same_as_default', 0)} given the default's launches, "
          f"{doc['cells'].get('same_code', 0)} another algorithm's (the same code), "
          f"{doc['cells'].get('skipped_by_models', 0)} left out by the cost models, "
          f"{doc['cells'].get('out_of_reach', 0)} out of reach of a verdict)")
    print(f"  {'collective':22} {'size':>8} {'rule':28} {'speedup':>8} {'95% CI':>16}  "
          f"{'launches':>8}  verdict")
    for c in cells:
        print(f"  {c['collective']:22} {c['size']:>8} {c['rule']:28} {c['speedup']:8.3f} "
              f"[{c['speedup_low']:.3f}, {c['speedup_high']:.3f}]  "
              f"{'/'.join(map(str, c.get('launches', []))) or '-':>8}  {c['verdict']}")
    tuned = [c for c in cells if c["rule"] != "default"]
    gm_tuned = (math.exp(sum(math.log(c["speedup"]) for c in tuned) / len(tuned))
                if tuned else None)
    # beyond noise: the verdict, corrected for the number of cells (Holm), and the 95% interval
    slow = [c for c in cells if c["verdict"] == "tuned slower" and c["speedup_high"] < 0.97]
    per_cell = [c for c in cells if c["speedup_high"] < 0.97]
    print(f"  geometric mean default/tuned, all cells: {v['geomean_speedup']:.3f}; cells with a "
          f"rule ({len(tuned)}): {gm_tuned if gm_tuned is None else round(gm_tuned, 3)}")
    print(f"  cells slower than 0.97 beyond noise: {len(slow)} (interval below 0.97 before the "
          f"correction for {len(cells)} cells: {len(per_cell)}); file in effect: "
          f"{v['file_in_effect']} (checked by {v['checked_by']}); withdrawn: "
          f"{len(doc['withdrawn'])}; last withdrawal verified: {v['last_withdrawal_verified']}")


def cmd_tune(args):
    hosts, slots = map(int, args.layout.split("x"))
    with Cluster("t", hosts, slots, preset="fast-ethernet") as name, \
            tempfile.TemporaryDirectory() as tmp:
        doc = tune(name, args.mpi, Path(tmp) / "t", "--sizes", args.sizes, "--coll", args.coll,
                   "--time-budget", str(args.time_budget), "--repeat", str(args.repeat),
                   "--verify-repeat", str(args.verify_repeat),
                   *(["--skip", args.skip] if args.skip else []))
        print(f"{args.mpi} {doc['version']} on {args.layout} Fast Ethernet")
        summary(doc)


def cmd_adaptive(args):
    hosts, slots = map(int, args.layout.split("x"))
    with Cluster("a", hosts, slots, preset="fast-ethernet") as name, \
            tempfile.TemporaryDirectory() as tmp:
        common = ["--sizes", args.sizes, "--coll", args.coll, "--time-budget",
                  str(args.time_budget), "--repeat", str(args.repeat),
                  *(["--skip", args.skip] if args.skip else [])]
        full = tune(name, args.mpi, Path(tmp) / "full", "--exhaustive", "--verify-repeat", "1",
                    *common)
        adap = tune(name, args.mpi, Path(tmp) / "adap", "--verify-repeat",
                    str(args.verify_repeat), *common)
        side_by_side = {pooled: (_decisions(Path(tmp) / "full", pooled),
                                 _decisions(Path(tmp) / "adap", pooled)) for pooled in (True, False)}
        replayed = replay(Path(tmp) / "full", args.repeat)
    print(f"{args.mpi} {adap['version']} on {args.layout} Fast Ethernet, adaptive (verified "
          f"with {args.verify_repeat} default/tuned pairs)")
    summary(adap)
    a, f = searched(adap), searched(full)
    same = same_choice(adap)
    agree = sum(same(k, a[k], f[k]) for k in f) / len(f)
    ties = sum(same(k, a[k], f[k]) or _tied(full, k, a[k]) for k in f) / len(f)
    for d, what in ((f, "exhaustive"), (a, "adaptive")):
        changed = sum(w != "default" for w in d.values())
        print(f"  {what}: {changed} of {len(d)} cells decided for an algorithm other than the "
              f"default")
    print(f"adaptive measured {adap['cells']['measured']} cells of the exhaustive grid's "
          f"{full['cells']['measured']} ({100 * adap['cells']['measured'] / full['cells']['measured']:.0f}%); "
          f"the searches' decisions (before any withdrawal) run the same code on "
          f"{100 * agree:.0f}% of {len(f)} cells (the same name on "
          f"{100 * sum(a[k] == f[k] for k in f) / len(f):.0f}%); counting as agreeing a "
          f"different choice the exhaustive run's own CIs cannot tell from its winner: "
          f"{100 * ties:.0f}%")
    for k in f:
        if a[k] != f[k]:
            print(f"  {k[0]} {k[2]} B: exhaustive {f[k]}, adaptive {a[k]}"
                  + (" (the same code)" if same(k, a[k], f[k]) else
                     " (tied in the exhaustive data)" if _tied(full, k, a[k]) else ""))
    print("the adaptive search replayed on the exhaustive run's own launches (what the search "
          "alone loses, without the run-to-run noise; bench/tune_search_replay.py):")
    print("\n".join("  " + line for line in replayed))
    print("the same two runs' measurements decided again by each rule (cells measured in both):")
    for pooled, (fd, ad) in side_by_side.items():
        both = [k for k in fd if k in ad]
        print(f"  {'pooled samples (one launch per cell)' if pooled else 'launch as the unit':38} "
              f"agree on {sum(fd[k] == ad[k] for k in both)} of {len(both)}; cells not the "
              f"default: exhaustive {sum(v != 'default' for v in fd.values())}, adaptive "
              f"{sum(ad[k] != 'default' for k in both)}")


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
    from mpiscope.tune.measure import Samples

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
    runs_as; default_probe.same_code)."""
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
            print(f"  {d['size']:>8} B  binomial {med['binomial'] * 1e6:9.1f} µs  "
                  f"scatter-allgather {med['scatter_allgather'] * 1e6:9.1f} µs")
    measured = next((s for s, b, sa in seq if sa < b), None)
    costs = Costs.hockney(alpha, 1 / bw)
    model = _model_crossover(costs)
    sizes = [s for s, _, _ in seq]
    print(f"measured binomial → scatter-allgather at {measured} B; Hockney model at {model} B "
          f"(grid {sizes})")
    if measured and model:
        steps = abs(math.log2(measured) - math.log2(model)) / math.log2(sizes[1] / sizes[0])
        print(f"  {steps:.1f} size steps apart (target: within 1)")


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
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("tune", "adaptive", "fig629"))
    ap.add_argument("--mpi", default="openmpi", choices=("openmpi", "mpich"))
    ap.add_argument("--layout", default="8x1", help="hosts x slots (8x1 or 4x2)")
    ap.add_argument("--coll", default="allreduce,bcast,reduce,allgather,alltoall,"
                                      "reduce_scatter_block,gather,scatter,barrier")
    ap.add_argument("--sizes", default=DEFAULT_SIZES)
    ap.add_argument("--time-budget", type=float, default=0.3)
    ap.add_argument("--skip", default="", help="algorithm names never forced (passed to tune)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds of launches (tune --repeat)")
    ap.add_argument("--verify-repeat", type=int, default=3,
                    help="default/tuned launch pairs of the verification (tune --verify-repeat)")
    ap.add_argument("--delay", type=float, default=70.0, help="fig629: one-way delay added (µs)")
    ap.add_argument("--keep", metavar="DIR", help="copy every tune's output directory into DIR")
    args = ap.parse_args()
    global KEEP
    KEEP = args.keep
    {"tune": cmd_tune, "adaptive": cmd_adaptive, "fig629": cmd_fig629}[args.what](args)


if __name__ == "__main__":
    main()
