"""The intra-node transport lab's targets (issue 16), from one go on this
machine: the designs (tp_* benchmarks, one run per placement class the
machine offers, ranks bound to a pair of CPUs of it; the targets are read in
the first class), MPI libraries' own paths (Open MPI
vader with single copy by CMA and with none; MPICH over UCX with and without
its cma transport), advise's settings verified against the defaults.

Prints, side by side from the same go:
  cma bandwidth at >= 1 MiB / one memcpy of the same size (numpy, warm)  target >= 0.9
    with 4 KiB pages and with both sides' buffers in transparent huge
    pages (run --huge-pages; memcpy's buffers then in huge pages too)
  basic 8-byte latency / Open MPI vader's pingpong                       target <= 1
  hybrid / the best single design at every size (latency, bandwidth)     target <= 1.03
    with this go's thresholds, --repeats interleaved runs, judged by the
    95% CI of the ratio (transport/against_best.py): sizes shown within 3%,
    shown beyond, undecided, and indistinguishable from the best
  advise's settings against the defaults (per library: slower/same/faster),
    the rules withdrawn where they were slower, and the settings left
  seed 002's qualitative results: cold large messages, small messages, a late receiver

    flock /tmp/mpiscope-heavy.lock .venv/bin/python bench/transport_lab.py [--time-budget 0.3] [--repeats 3]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ctypes
import mmap

import numpy as np

from mpiscope.transport.advise import advise
from mpiscope.store.ingest import load
from mpiscope.transport.against_best import BEYOND, UNDECIDED, WITHIN, against_best, tally

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


HUGE = 2 << 20


def huge_array(size):
    """`size` bytes at a 2 MiB boundary of an anonymous mapping advised for
    transparent huge pages before the first touch (as the engine's --huge-pages)."""
    m = mmap.mmap(-1, size + 2 * HUGE)
    start = -ctypes.addressof(ctypes.c_char.from_buffer(m)) % HUGE
    m.madvise(mmap.MADV_HUGEPAGE, start, (size + HUGE - 1) // HUGE * HUGE)
    a = np.frombuffer(m, np.uint8, size, start)
    a[:] = 0
    return a


def memcpy_bw(size, reps=20, huge=False):
    """Bytes per second of one warm copy of `size` bytes (numpy's copyto is memcpy)."""
    a, b = (huge_array(size), huge_array(size)) if huge else (np.ones(size, np.uint8), np.zeros(size, np.uint8))
    a[:] = 1
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
    ap.add_argument("--repeats", type=int, default=3,
                    help="interleaved runs of the hybrid with this go's thresholds (default 3)")
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
        # cma against memcpy at 1-16 MiB, buffers in 4 KiB pages and then in
        # huge pages on both sides (memcpy's too): process_vm_readv pins the
        # sender's pages one by one, a huge page pins 512 at a time
        bind = ("--launcher-args", f"--cpu-list {classes[0]['pair'][0]},{classes[0]['pair'][1]} "
                                   "--bind-to cpu-list:ordered")
        for huge in (False, True):
            pages = run(out, "--bench", "tp_bw", "--sizes", "1M-16M:x2", "--warmup", 2, *tb, *bind,
                        *(["--huge-pages"] if huge else []),
                        "--label", f"tp-cma-{'huge' if huge else '4k'}-{int(time.time())}")
            granted = {r: e.get("huge_kib") for r, e in load(pages)[1].ranks.get("0", {}).items()}
            cma = advise([pages]).lab.get("tp_bw", cls, "cma")
            print(f"-- cma against memcpy, buffers in {'huge pages (granted KiB per rank: ' + str(granted) + ')' if huge else '4 KiB pages'}")
            for size in sorted(cma.medians if cma else ()):
                mc = memcpy_bw(size, huge=huge)
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
            print(f"hybrid / best single design, {bench}, medians of the lab run: worst {worst.hybrid_ratio:.2f} at {worst.size} B "
                  f"(best there: {worst.best}); {len(rows) - len(over)} of {len(rows)} sizes within 3%"
                  + (f"; beyond: {', '.join(over)}" if over else ""))
        for first in ("ompi-cma", "ucx-cma"):
            others = [d.name for k, d in lib.items() if k != first]
            doc = json.loads(cli("transport", "advise", lib[first].name, *[d.name for d in labs], *others, "--verify",
                                 "--verify-sizes", "1K-16M:x4", *tb, "--json", out=out))
            v = doc["verify"]
            for k, p in enumerate(v["passes"]):
                verdicts = [r["verdict"] for r in p["rows"]]
                print(f"settings {v['library']} pass {k + 1} ({' '.join(p['launcher_args'])}), launched alternately "
                      f"{' '.join(x['side'][0].upper() for x in p['launches'])}: "
                      + ", ".join(f"{k} {verdicts.count(k)}" for k in ("advised faster", "same", "advised slower",
                                                                        "insufficient")))
                for r in p["rows"]:
                    print(f"  {r['bench']} {r['size']} B: speedup {r['speedup'] or float('nan'):.2f} "
                          f"[{r['speedup_low'] or float('nan'):.2f}, {r['speedup_high'] or float('nan'):.2f}] "
                          f"{r['verdict']}")
            for w in v["withdrawn"]:
                print(f"  withdrawn: {w['name']}: slower at "
                      + ", ".join(f"{x['bench']} {x['size']} B" for x in w["because"]))
            print(f"  settings left: {' | '.join(v['final']['lines'])}")

        # the hybrid with the thresholds this go measured (advise's
        # MPISCOPE_TP_THRESHOLDS, from significant wins), against the best
        # single design: --repeats runs, each with the designs back to back
        # per size, pooled for the CI of the ratio, each alone for the rounds
        hy = next(x for x in a.settings[cls] if x.library.startswith("mpiscope hybrid")).env
        print(f"== hybrid with this go's thresholds: MPISCOPE_TP_THRESHOLDS={hy['MPISCOPE_TP_THRESHOLDS']}, "
              f"{args.repeats} interleaved runs ==")
        repeats = [run(out, "--bench", "tp_latency,tp_bw", "--sizes", SIZES, "--warmup", 2, *tb,
                       "--label", f"tp-hybrid-{cls}-{k}-{int(time.time())}", *bind, env=hy)
                   for k in range(args.repeats)]
        rows = against_best(repeats)
        for (place, bench), t in tally(rows).items():
            print(f"hybrid / best single design, {bench} ({place}): {t[WITHIN]} of {t['sizes']} sizes within 3% "
                  f"(the whole 95% CI), {t[BEYOND]} beyond, {t[UNDECIDED]} undecided; "
                  f"{t['indistinguishable']} indistinguishable from the best (compare: same)")
            for r in (r for r in rows if (r.placement, r.bench) == (place, bench)):
                print(f"  {r.size:>9} B  best {r.best:<9} hybrid/best {r.ratio:.3f} [{r.low:.3f}, {r.high:.3f}] "
                      f"runs {' '.join(f'{x:.3f}' for x in r.rounds)}  {r.margin}, compare: {r.verdict}")

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
