"""The intra-node transport lab's targets (issue 16), from one go on this
machine: the designs (tp_* benchmarks, one run per placement class the
machine offers, ranks bound to a pair of CPUs of it; the targets are read in
the first class), MPI libraries' own paths (Open MPI
vader with single copy by CMA and with none; MPICH over UCX with and without
its cma transport), advise's settings verified against the defaults.

Prints, side by side from the same go:
  cma bandwidth at >= 1 MiB / one memcpy of the same size (numpy, warm)  target >= 0.9
  basic 8-byte latency / Open MPI vader's pingpong                       target <= 1
  hybrid / the best single design at every size (latency, bandwidth)     target <= 1.03
  advise's settings against the defaults (per library: slower/same/faster)
  seed 002's qualitative results: cold large messages, small messages, a late receiver

    flock /tmp/mpiscope-heavy.lock .venv/bin/python bench/transport_lab.py [--time-budget 0.3]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from mpiscope.transport.advise import advise

SIZES = "1-16M:x4,8"
LIB_SIZES = "8,1K-16M:x4"


def cli(*args, out=None, env=None):
    env = {**os.environ, **(env or {})}
    env.pop("MPISCOPE_PROGRESS", None)
    p = subprocess.run([sys.executable, "-m", "mpiscope.cli", *map(str, args), *(["--out", str(out)] if out else [])],
                       capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"mpiscope {' '.join(map(str, args))} failed ({p.returncode}):\n{p.stderr[-3000:]}")
    return p.stdout


def run(out, *args, env=None):
    return Path(json.loads(cli("run", "-n", 2, *args, "--json", out=out, env=env))["run_dir"])


def hybrid_against_best(run_dir, bench, cls, best_at):
    """Per size: the hybrid's cost over the best single design's (medians of
    the same run, the variants of a size measured together), with compare's
    bootstrap CI: [(size, best, ratio, low, high)]."""
    from mpiscope.stats.compare import compare_samples
    from mpiscope.store.ingest import load
    from mpiscope.store.series import all_series_samples

    table, r = load(run_dir)
    smp = {(a, int(n)): x for b, a, n, x in all_series_samples(table, r) if b == bench}
    rng = np.random.default_rng(1)
    out = []
    for size, best in sorted(best_at.items()):
        h, b = smp.get(("hybrid", size)), smp.get((best, size))
        if h is None or b is None or not len(h.values) or not len(b.values):
            continue
        ratio, _, _, _ = compare_samples(b.values, h.values, rng)  # hybrid / best, stored values
        if b.unit == "B/s":  # a cost is a time: invert bandwidths (and the interval)
            out.append((size, best, 1 / ratio.point, 1 / ratio.high, 1 / ratio.low))
        else:
            out.append((size, best, ratio.point, ratio.low, ratio.high))
    return out


def memcpy_bw(size, reps=20):
    """Bytes per second of one warm copy of `size` bytes (numpy's copyto is memcpy)."""
    a, b = np.ones(size, np.uint8), np.zeros(size, np.uint8)
    np.copyto(b, a)
    took = []
    for _ in range(reps):
        t = time.perf_counter()
        np.copyto(b, a)
        took.append(time.perf_counter() - t)
    return size / float(np.median(took))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-budget", type=float, default=0.3)
    ap.add_argument("--out", help="keep the runs here (default: a temporary directory)")
    args = ap.parse_args()
    tb = ("--time-budget", args.time_budget)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or tmp)
        print(cli("transport", "probe"), flush=True)
        # one lab run per placement class this machine offers, the ranks bound to a pair of that class
        classes = json.loads(cli("transport", "probe", "--json"))["placement"]["classes"]
        labs = [run(out, "--bench", "tp_latency,tp_bw,tp_bw_cold,tp_skew,tp_overlap,tp_poll", "--sizes", SIZES,
                    "--warmup", 2, *tb, "--label", f"tp-lab-{c['class']}-{int(time.time())}",
                    "--launcher-args", f"--cpu-list {c['pair'][0]},{c['pair'][1]} --bind-to cpu-list:ordered")
                for c in classes]
        lab = labs[0]
        lib = {
            "ompi-cma": run(out, "--mpi", "openmpi", "--bench", "pingpong,bw", "--sizes", LIB_SIZES, *tb,
                            "--launcher-args", "--mca btl_vader_single_copy_mechanism cma"),
            "ompi-none": run(out, "--mpi", "openmpi", "--bench", "pingpong,bw", "--sizes", LIB_SIZES, *tb,
                             "--launcher-args", "--mca btl_vader_single_copy_mechanism none"),
            "ucx-cma": run(out, "--mpi", "mpich", "--bench", "pingpong,bw", "--sizes", LIB_SIZES, *tb,
                           "--launcher-args", "-genv UCX_TLS posix,cma,self"),
            "ucx-posix": run(out, "--mpi", "mpich", "--bench", "pingpong,bw", "--sizes", LIB_SIZES, *tb,
                             "--launcher-args", "-genv UCX_TLS posix,self"),
        }
        a = advise([*labs, *lib.values()])
        print(cli("transport", "advise", *[d.name for d in labs], *[d.name for d in lib.values()], out=out),
              flush=True)
        cls = a.lab.placements()[0]
        get = a.lab.get

        print("== targets (ratios from this one go) ==")
        cma = get("tp_bw", cls, "cma")
        for size in (1 << 20, 4 << 20, 16 << 20):
            if cma and size in cma.medians:
                mc = memcpy_bw(size)
                print(f"cma bandwidth {size >> 20}M: {cma.medians[size] / 1e9:.2f} GB/s, memcpy "
                      f"{mc / 1e9:.2f} GB/s: ratio {cma.medians[size] / mc:.2f} (target >= 0.9)")
        basic8 = get("tp_latency", cls, "basic").medians.get(8)
        vader8 = a.lab.library_paths("lib_latency", cls).get(("Open MPI 4", "single copy"))
        if basic8 and vader8 and 8 in vader8.medians:
            print(f"basic 8 B latency {basic8 * 1e6:.3f} us, Open MPI vader pingpong {vader8.medians[8] * 1e6:.3f} us: "
                  f"ratio {basic8 / vader8.medians[8]:.2f} (target <= 1)")
        for bench in ("tp_latency", "tp_bw"):
            rows = [r for r in a.best[bench] if r.placement == cls and r.hybrid_ratio]
            worst = max(rows, key=lambda r: r.hybrid_ratio)
            over = [f"{r.size}:{r.hybrid_ratio:.2f}" for r in rows if r.hybrid_ratio > 1.03]
            print(f"hybrid / best single design, {bench}: worst {worst.hybrid_ratio:.2f} at {worst.size} B "
                  f"(best there: {worst.best}); {len(rows) - len(over)} of {len(rows)} sizes within 3%"
                  + (f"; beyond: {', '.join(over)}" if over else ""))
        for first in ("ompi-cma", "ucx-cma"):
            others = [d.name for k, d in lib.items() if k != first]
            doc = json.loads(cli("transport", "advise", lib[first].name, *[d.name for d in labs], *others, "--verify",
                                 "--verify-sizes", "1K-16M:x4", *tb, "--json", out=out))
            v = doc["verify"]
            verdicts = [r["verdict"] for r in v["rows"]]
            print(f"settings {v['library']} ({' '.join(v['launcher_args'])}), launched alternately "
                  f"{' '.join(x['side'][0].upper() for x in v['launches'])}: "
                  + ", ".join(f"{k} {verdicts.count(k)}" for k in ("advised faster", "same", "advised slower",
                                                                    "insufficient")))
            for r in v["rows"]:
                print(f"  {r['bench']} {r['size']} B: speedup {r['speedup'] or float('nan'):.2f} "
                      f"[{r['speedup_low'] or float('nan'):.2f}, {r['speedup_high'] or float('nan'):.2f}] "
                      f"{r['verdict']}")

        # the hybrid with the thresholds this go measured (advise's
        # MPISCOPE_TP_THRESHOLDS), against the best single design in the same
        # run: the defaults in transport/hybrid.c come from another go
        hy = next(x for x in a.settings[cls] if x.library.startswith("mpiscope hybrid")).env
        print(f"== hybrid with this go's thresholds: MPISCOPE_TP_THRESHOLDS={hy['MPISCOPE_TP_THRESHOLDS']} ==")
        second = run(out, "--bench", "tp_latency,tp_bw", "--sizes", SIZES, "--warmup", 2, *tb,
                     "--label", f"tp-hybrid-{cls}-{int(time.time())}", "--launcher-args",
                     f"--cpu-list {classes[0]['pair'][0]},{classes[0]['pair'][1]} --bind-to cpu-list:ordered", env=hy)
        b2 = advise([second])
        for bench in ("tp_latency", "tp_bw"):
            best_at = {r.size: r.best for r in b2.best[bench] if r.placement == cls}
            rows = hybrid_against_best(second, bench, cls, best_at)
            within = [r for r in rows if r[2] <= 1.03]
            maybe = [r for r in rows if r[2] > 1.03 and r[3] <= 1.03]
            print(f"hybrid / best single design, {bench}: {len(within)} of {len(rows)} sizes within 3% "
                  f"(median ratio), {len(maybe)} more whose 95% CI reaches 3%")
            for size, best, ratio, lo, hi in rows:
                print(f"  {size:>9} B  best {best:<9} hybrid/best {ratio:.3f} [{lo:.3f}, {hi:.3f}]"
                      + ("" if ratio <= 1.03 else "  beyond 3%"))

        print("== seed 002's qualitative results ==")
        for state, bench in (("cold", "tp_bw_cold"), ("warm", "tp_bw")):
            for size in (1 << 20, 4 << 20, 16 << 20):
                c = get(bench, cls, "cma")
                copies = [x.cost(size) for x in (get(bench, cls, "basic"), get(bench, cls, "advanced")) if x and x.cost(size)]
                if c and c.cost(size) and copies:
                    print(f"{state} {size >> 20}M: cma / best copy time {c.cost(size) / min(copies):.2f} "
                          f"({'single copy wins' if c.cost(size) < min(copies) else 'a copy wins'})")
        for size in (8, 1024):
            b, c = get("tp_latency", cls, "basic").cost(size), get("tp_latency", cls, "cma").cost(size)
            print(f"small {size} B latency: basic {b * 1e6:.2f} us, cma {c * 1e6:.2f} us")
        best = {r.size: r.best for r in a.best["tp_latency"] if r.placement == cls}
        late = {r.size: r.best for r in a.best["tp_skew"] if r.placement == cls}
        moved = [f"{s}: {best[s]} -> {late[s]}" for s in sorted(set(best) & set(late)) if best[s] != late[s]]
        print(f"a late receiver (tp_skew) changes the best design at {len(moved)} of {len(late)} sizes"
              + (f": {', '.join(moved)}" if moved else ""))
        ov = [r for r in a.overlap if r["design"] in ("offload", "basic") and r["size"] >= 65536]
        for r in ov:
            print(f"overlap {r['design']} {r['size']} B: {r['overlap'] * 100:.0f}% of the computation hidden")


if __name__ == "__main__":
    main()
