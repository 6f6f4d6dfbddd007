"""How long does a trustworthy table take, against IMB?

Each trial runs, one after the other on 2 Open MPI ranks bound to cores,
IMB-MPI1 (PingPong Sendrecv Allreduce Reduce Bcast Allgather Alltoall Barrier,
1 B - 4 MiB) and `mpiscope run` on the same eight operations and sizes
(pingpong, ring, allreduce, reduce, bcast, allgather, alltoall, barrier).
Prints the wall times and their ratio, the share of mpiscope's series whose
95% CI of the median is within ±2 % of it (per trial also those outside, by
the engine's stop reason), and where mpiscope's time went:
interpreter start, build check, launch (launcher and MPI start/exit), clock
sync, warm-up, series set-up, batches, stopping rule, files, ingest, and the
rest (the catalog and the summary table). Targets: ratio <= 2, share >= 95 %.

    .venv/bin/python bench/time_to_table.py --imb PATH/IMB-MPI1 [--trials 3] [-- RUN OPTIONS]

Without --imb (or when the program is absent) IMB is skipped and only
mpiscope's side is printed. Options after `--` go to `mpiscope run`.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from mpiscope.engine.build import ensure_engine
from mpiscope.measure import launch

IMB_OPS = ["PingPong", "Sendrecv", "Allreduce", "Reduce", "Bcast", "Allgather", "Alltoall", "Barrier"]
OUR_OPS = "pingpong,ring,allreduce,reduce,bcast,allgather,alltoall,barrier"
CI_TARGET = 0.02


def timed(cmd, env=None):
    began = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return time.perf_counter() - began, out.stdout


def imb_seconds(imb):
    cmd = ["mpirun.openmpi", "-n", "2", "--bind-to", "core", str(imb), *IMB_OPS, "-msglog", "0:22",
           "-npmin", "2"]
    return timed(cmd, launch.launch_env("openmpi"))[0]


def interpreter_start():
    """Seconds to start Python and mpiscope's command line (its --help)."""
    return timed([sys.executable, "-m", "mpiscope.cli", "--help"])[0]


def ours(out_root, extra):
    """Wall seconds, the share of series within the CI target, and the time per part."""
    cmd = [sys.executable, "-m", "mpiscope.cli", "run", "-n", "2", "--bench", OUR_OPS, "--sizes", "1-4M:x2",
           "--json", "--out", str(out_root), *extra]
    wall, stdout = timed(cmd)
    result = json.loads(stdout)
    rows = [r for r in result["rows"] if r.get("median")]
    wide = [r for r in rows if (r["ci_high"] - r["ci_low"]) / 2 > CI_TARGET * r["median"]]
    within = len(rows) - len(wide)
    # Outside the target, by why the engine stopped: "ci" means the engine's
    # rule saw the target reached where show's interval is wider.
    outside = {stop: sum(r["stop"] == stop for r in wide) for stop in sorted({r["stop"] for r in wide})}
    timing = json.loads((Path(result["run_dir"]) / "context.json").read_text())["timing"]
    engine = timing["engine"]
    engine_total = sum(engine.values())
    parts = {"build check": timing["build_check_s"],
             "launch": timing["launch_s"] - engine_total,
             **{name.replace("_", " "): s for name, s in engine.items()},
             "ingest": timing["ingest_s"]}
    return wall, within / max(1, len(result["rows"])), len(result["rows"]), parts, outside


def main():
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--imb", help="path of IMB-MPI1 built with Open MPI (mpicc.openmpi)")
    ap.add_argument("--trials", type=int, default=3)
    args = ap.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if args.trials < 1:
        ap.error(f"--trials must be at least 1, got {args.trials}")
    imb = args.imb if args.imb and os.access(args.imb, os.X_OK) else None
    if not imb:
        print(f"IMB: skipped ({'not given' if not args.imb else args.imb + ' is not an executable'})")
    ensure_engine("openmpi")
    rows = {}

    def keep(name, value):
        rows.setdefault(name, []).append(value)

    with tempfile.TemporaryDirectory() as tmp:
        for t in range(args.trials):
            if imb:
                keep("IMB-MPI1 wall s", imb_seconds(imb))
            start = interpreter_start()
            wall, share, n, parts, outside = ours(Path(tmp), extra)
            keep("mpiscope wall s", wall)
            keep(f"series within ±{CI_TARGET:.0%} CI (of {n})", share)
            if imb:
                keep("ratio mpiscope / IMB", wall / rows["IMB-MPI1 wall s"][-1])
            keep("  interpreter start", start)
            for name, seconds in parts.items():
                keep(f"  {name}", seconds)
            keep("  rest (catalog, summary)", wall - start - sum(parts.values()))
            print(f"trial {t + 1}/{args.trials}: " + ", ".join(f"{k.strip()} {v[-1]:.3g}" for k, v in rows.items()
                                                               if not k.startswith("  "))
                  + "; outside ±2% by stop reason: " + (", ".join(f"{k} {v}" for k, v in outside.items()) or "none"),
                  file=sys.stderr)
    print(f"{'median over ' + str(args.trials) + ' trials':<40} {'value':>8}")
    for name, values in rows.items():
        value = statistics.median(values)
        print(f"{name:<40} {value:>8.1%}" if "within" in name else f"{name:<40} {value:>8.2f}")


if __name__ == "__main__":
    main()
