# SPDX-License-Identifier: BSD-3-Clause
"""The intra-node transport lab against its targets, all from one run of this script.

Measures, with --time-budget per series: the designs (tp_* benchmarks, one
run per placement class the machine offers, the ranks bound to a pair of
CPUs of that class; the targets are read in the first class); MPI
libraries' own paths (Open MPI vader with single copy by CMA and with none;
MPICH over UCX with and without its cma transport); `mpiscope transport
advise`'s settings verified against the defaults; and the hybrid design
with the thresholds this run measured, in --repeats interleaved runs.

Prints `mpiscope transport probe` and `transport advise` as they print
themselves, then one table per target:
  cma bandwidth at >= 1 MiB / one memcpy of the same size (numpy, warm),
    with buffers in 4 KiB pages and with both sides' buffers in transparent
    huge pages (run --huge-pages; memcpy's buffers then in huge pages too)
                                                                   target >= 0.9
  basic 8-byte latency / Open MPI vader's pingpong                 target <= 1
  hybrid / the best single design at every size (latency, bandwidth),
    medians of the lab run                                         target <= 1.03
  advise's settings against the defaults, per library and verification
    pass (advised faster / same / advised slower / insufficient, and each
    size's speed-up with its 95% CI); the rules withdrawn where they were
    slower, and the settings left
  the hybrid with this run's thresholds: --repeats interleaved runs, judged
    by the 95% CI of the ratio (transport/against_best.py): sizes shown
    within 3%, shown beyond, undecided, and indistinguishable from the best
and the qualitative results of Chai (2009): single copy against the best
copy for cold and warm large messages, small-message latency, how often a
late receiver changes the best design, and how much computation each
design lets overlap.

Uses Open MPI and MPICH (both must be installed); no peer tool.

To reproduce (about a quarter of an hour with the defaults):

    .venv/bin/python bench/transport_lab.py --time-budget 0.3 --repeats 3 --json transport-lab.json
"""

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

import benchjson
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
    ap = benchjson.parser(__doc__)
    ap.add_argument("--time-budget", type=float, default=0.3,
                    help="seconds at most per series of every run (default %(default)s)")
    ap.add_argument("--out", metavar="DIR", help="keep the runs in DIR (default: a temporary directory)")
    ap.add_argument("--repeats", type=int, default=3,
                    help="interleaved runs of the hybrid with the thresholds measured (default %(default)s)")
    args = benchjson.parse(ap)
    tb = ("--time-budget", args.time_budget)
    show, tables, results = benchjson.show, [], {}
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

        print(f"== targets (ratios from this one run, placement class {cls}) ==\n")
        # cma against memcpy at 1-16 MiB, buffers in 4 KiB pages and then in
        # huge pages on both sides (memcpy's too): process_vm_readv pins the
        # sender's pages one by one, a huge page pins 512 at a time
        bind = ("--launcher-args", f"--cpu-list {classes[0]['pair'][0]},{classes[0]['pair'][1]} "
                                   "--bind-to cpu-list:ordered")
        cma_rows, granted = [], {}
        for huge in (False, True):
            pages = run(out, "--bench", "tp_bw", "--sizes", "1M-16M:x2", "--warmup", 2, *tb, *bind,
                        *(["--huge-pages"] if huge else []),
                        "--label", f"tp-cma-{'huge' if huge else '4k'}-{int(time.time())}")
            kind = "huge pages" if huge else "4 KiB pages"
            granted[kind] = {r: e.get("huge_kib") for r, e in load(pages)[1].ranks.get("0", {}).items()}
            cma = advise([pages]).lab.get("tp_bw", cls, "cma")
            for size in sorted(cma.medians if cma else ()):
                mc = memcpy_bw(size, huge=huge)
                cma_rows.append([kind, size >> 20, cma.medians[size] / 1e9, mc / 1e9, cma.medians[size] / mc])
        tables.append(show("cma bandwidth against one memcpy of the same size",
                           ["buffers in", "size MiB", "cma GB/s", "memcpy GB/s", "cma / memcpy"], cma_rows,
                           [f"huge pages granted (KiB per rank): {granted.get('huge pages')}",
                            "target: >= 0.9"]))
        basic8 = get("tp_latency", cls, "basic").medians.get(8)
        vader8 = a.lab.library_paths("lib_latency", cls).get(("Open MPI 4", "single copy"))
        if basic8 and vader8 and 8 in vader8.medians:
            tables.append(show("8-byte latency: the basic design against Open MPI vader's pingpong",
                               ["basic us", "vader us", "basic / vader"],
                               [[basic8 * 1e6, vader8.medians[8] * 1e6, basic8 / vader8.medians[8]]],
                               ["target: <= 1"]))
        medians_rows = []
        for bench in ("tp_latency", "tp_bw"):
            rows = [r for r in a.best[bench] if r.placement == cls and r.hybrid_ratio]
            worst = max(rows, key=lambda r: r.hybrid_ratio)
            over = [f"{r.size}:{r.hybrid_ratio:.2f}" for r in rows if r.hybrid_ratio > 1.03]
            medians_rows.append([bench, worst.hybrid_ratio, worst.size, worst.best, len(rows) - len(over),
                                 len(rows), ", ".join(over)])
        tables.append(show("hybrid / best single design, medians of the lab run",
                           ["bench", "worst ratio", "at size B", "best there", "sizes within 3%", "sizes",
                            "beyond (size:ratio)"], medians_rows, ["target: <= 1.03 at every size"]))
        passes, verdicts_rows, verify = [], [], {}
        for first in ("ompi-cma", "ucx-cma"):
            others = [d.name for k, d in lib.items() if k != first]
            doc = json.loads(cli("transport", "advise", lib[first].name, *[d.name for d in labs], *others, "--verify",
                                 "--verify-sizes", "1K-16M:x4", *tb, "--json", out=out))
            v = verify[first] = doc["verify"]
            for k, p in enumerate(v["passes"]):
                verdicts = [r["verdict"] for r in p["rows"]]
                passes.append([v["library"], k + 1, " ".join(p["launcher_args"]),
                               " ".join(x["side"][0].upper() for x in p["launches"]),
                               *(verdicts.count(x) for x in ("advised faster", "same", "advised slower",
                                                             "insufficient"))])
                verdicts_rows += [[v["library"], k + 1, r["bench"], r["size"], r["speedup"], r["speedup_low"],
                                   r["speedup_high"], r["verdict"]] for r in p["rows"]]
        notes = [f"{v['library']}: withdrawn {w['name']} (slower at "
                 + ", ".join(f"{x['bench']} {x['size']} B" for x in w["because"]) + ")"
                 for v in verify.values() for w in v["withdrawn"]]
        notes += [f"{v['library']}: settings left: {' | '.join(v['final']['lines'])}" for v in verify.values()]
        tables.append(show("advise's settings against the defaults, launched alternately (A advised, D default)",
                           ["library", "pass", "launcher arguments", "launches", "advised faster", "same",
                            "advised slower", "insufficient"], passes, notes))
        tables.append(show("advise's settings against the defaults, per size",
                           ["library", "pass", "bench", "size B", "speed-up", "CI low", "CI high", "verdict"],
                           verdicts_rows))
        results["verify"] = verify

        # the hybrid with the thresholds this run measured (advise's
        # MPISCOPE_TP_THRESHOLDS, from significant wins), against the best
        # single design: --repeats runs, each with the designs back to back
        # per size, pooled for the CI of the ratio, each alone for the rounds
        hy = next(x for x in a.settings[cls] if x.library.startswith("mpiscope hybrid")).env
        repeats = [run(out, "--bench", "tp_latency,tp_bw", "--sizes", SIZES, "--warmup", 2, *tb,
                       "--label", f"tp-hybrid-{cls}-{k}-{int(time.time())}", *bind, env=hy)
                   for k in range(args.repeats)]
        rows = against_best(repeats)
        head = (f"hybrid with this run's thresholds (MPISCOPE_TP_THRESHOLDS={hy['MPISCOPE_TP_THRESHOLDS']}), "
                f"{args.repeats} interleaved runs")
        tables.append(show(f"{head}: sizes by the 95% CI of hybrid / best",
                           ["placement", "bench", "sizes", "within 3%", "beyond", "undecided",
                            "indistinguishable from the best"],
                           [[place, bench, t["sizes"], t[WITHIN], t[BEYOND], t[UNDECIDED], t["indistinguishable"]]
                            for (place, bench), t in tally(rows).items()],
                           ["within: the whole 95% CI of the ratio within 3%; indistinguishable: compare's "
                            "verdict same"]))
        tables.append(show(f"{head}: per size", ["placement", "bench", "size B", "best", "hybrid / best",
                                                 "CI low", "CI high", "per run", "margin", "compare"],
                           [[r.placement, r.bench, r.size, r.best, r.ratio, r.low, r.high,
                             " ".join(f"{x:.3f}" for x in r.rounds), r.margin, r.verdict] for r in rows]))
        results["hybrid"] = {"thresholds": hy["MPISCOPE_TP_THRESHOLDS"], "rows": [r.to_dict() for r in rows]}

        print("== the qualitative results of Chai (2009) ==\n")
        copy_rows = []
        for state, bench in (("cold", "tp_bw_cold"), ("warm", "tp_bw")):
            for size in (1 << 20, 4 << 20, 16 << 20):
                c = get(bench, cls, "cma")
                copies = [x.cost(size) for x in (get(bench, cls, "basic"), get(bench, cls, "advanced")) if x and x.cost(size)]
                if c and c.cost(size) and copies:
                    copy_rows.append([state, size >> 20, c.cost(size) / min(copies),
                                      "single copy" if c.cost(size) < min(copies) else "a copy"])
        if copy_rows:
            tables.append(show("large messages: single copy (cma) against the best copy design",
                               ["buffers", "size MiB", "cma / best copy time", "faster"], copy_rows))
        small = []
        for size in (8, 1024):
            b, c = get("tp_latency", cls, "basic").cost(size), get("tp_latency", cls, "cma").cost(size)
            small.append([size, b * 1e6, c * 1e6])
        tables.append(show("small messages: latency", ["size B", "basic us", "cma us"], small))
        best = {r.size: r.best for r in a.best["tp_latency"] if r.placement == cls}
        late = {r.size: r.best for r in a.best["tp_skew"] if r.placement == cls}
        moved = [f"{s}: {best[s]} -> {late[s]}" for s in sorted(set(best) & set(late)) if best[s] != late[s]]
        tables.append(show("a late receiver (tp_skew) against tp_latency: the best design",
                           ["sizes where it changes", "sizes", "changes (size: on time -> late)"],
                           [[len(moved), len(late), ", ".join(moved)]]))
        ov = [r for r in a.overlap if r["design"] in ("offload", "basic") and r["size"] >= 65536]
        if ov:
            tables.append(show("overlap: computation hidden behind a transfer", ["design", "size B", "hidden %"],
                               [[r["design"], r["size"], 100 * r["overlap"]] for r in ov]))
    benchjson.write(args, "transport_lab", tables,
                    {"tables": {t["title"]: benchjson.records(t) for t in tables}, **results},
                    mpi=benchjson.mpi_names("mpicc.openmpi", "mpicc.mpich"))


if __name__ == "__main__":
    main()
