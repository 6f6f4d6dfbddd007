# SPDX-License-Identifier: BSD-3-Clause
"""The whole loop on real applications from Debian's packages, on an
emulated Fast Ethernet cluster (4 hosts, one rank each, 100 Mbit/s to one
switch): for each application and its MPI library, in one run,

  cluster up -> pingpong and ring on all hosts (the simulator's costs) ->
  profile --trace ->
  profile weights -> tune (the collectives and sizes the profile says carry
  the time, with its weights) -> app compare --profile --tune --whatif-p
  (the measured speedup beside the predicted one, and the what-if at more
  ranks) -> report -> cluster down.

The applications (both spend a real share of their time in collectives on
this cluster; the profile table shows how much):
- lammps (Open MPI: Debian's lmp): the Lennard-Jones melt of
  tests/data/in.lj-rdf on 4000 atoms with its radial distribution function
  sampled every step in 23170 bins, an MPI_Allreduce of 185360 B a step;
- mocassin (MPICH: Debian's mocassin, the Monte Carlo photoionisation code)
  on the Meudon HII region benchmark (tests/data/mocassin/), whose ranks sum
  their grids' estimators with MPI_Allreduce of up to 1 MiB.

A launch that runs past 4 times the profiled time (at least 30 s) is
stopped and counted as failed: Debian's MPICH 4.0 can stay in MPI_Finalize
for ever when its ranks leave it at different times over the emulated
hosts (fixed upstream by pmodels/mpich#6596; mpiscope's own programs and
profiled runs end with a barrier outside MPI that rules this out, an
application does not).

The collectives tuned are those whose blocking calls on all ranks carry at
least --min-share of the application's time (barrier left out: its time is
the wait for the last rank, which no algorithm changes), at the middle of
their size bins: the size a profile's bin stands for in the weights and in
the prediction.

Tables: where the time goes (the profile); the loop's answer per
application and library: the share of the application's time in the tuned
collectives and their verified speedup (time-weighted), the measured
speedup with its 95% interval, the predicted one with its interval, whether
they agree, and the targets; the what-if at more ranks. Targets: no
verified file makes an application slower beyond the noise threshold; where
the tuned collectives carry at least 20% of the application's time and are
at least 1.5x faster, the measured speedup is at least 1.1 and inside the
predicted interval.

Needs root (emulated clusters), lmp and mocassin (scripts/setup-system.sh).

To reproduce (as root; about 40 minutes on 2 cores):

    .venv/bin/python bench/app_loop.py --json docs/validation/app-loop.json
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import benchjson
from tune_fe import Cluster

from mpiscope.app.profile_cells import profile_times
from mpiscope.tune.weights import _bin_size as bin_size

PY = [sys.executable, "-m", "mpiscope.cli"]
DATA = benchjson.REPO / "tests" / "data"
TUNABLE = ("allreduce", "bcast", "reduce", "allgather", "alltoall", "reduce_scatter_block", "gather", "scatter")
HOSTS = 4
WHATIF_P = "8,16"
TRACED_WITHIN = 0.15  # the target: the what-if at the traced rank count within 15% of the trace
# The traced rank count simulated with each benchmark's costs: the pingpong with every exchange (a message
# with one the other way at once) from the ring, the pingpong alone (the what-if's), the ring alone.
COSTS = {
    "pingpong+exchange": ("--p2p", "pingpong", "--exchange-from-ring"),
    "pingpong": ("--p2p", "pingpong"),
    "ring": ("--p2p", "ring"),
}


@dataclass(frozen=True)
class App:
    name: str
    mpi: str
    command: tuple
    files: tuple  # (source, destination in the working directory)
    dirs: tuple = ()  # empty directories it writes into

    def prepare(self, where: Path) -> Path:
        where.mkdir(parents=True)
        for source, dest in self.files:
            (where / dest).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, where / dest)
        for d in self.dirs:
            (where / d).mkdir(parents=True, exist_ok=True)
        return where


APPS = {
    "lammps": App(
        "lammps",
        "openmpi",
        (
            "lmp",
            "-in",
            "in.lj-rdf",
            "-var",
            "x",
            "0.5",
            "-var",
            "y",
            "0.5",
            "-var",
            "z",
            "0.5",
            "-var",
            "steps",
            "100",
            "-var",
            "bins",
            "23170",
            "-log",
            "none",
            "-screen",
            "none",
        ),
        ((DATA / "in.lj-rdf", "in.lj-rdf"),),
    ),
    "mocassin": App(
        "mocassin",
        "mpich",
        ("mocassin",),
        (
            (DATA / "mocassin" / "input.in", "input/input.in"),
            (Path("/usr/share/mocassin/benchmarks/gas/HII40/abunHII40.in"), "input/abunHII40.in"),
        ),
        ("output",),
    ),
}


def mpiscope(*words, cwd=None, json_out=True, ok=(0,)):
    """One mpiscope command; its JSON document (or None when it printed none)."""
    cmd = PY + [str(w) for w in words]
    print("$ mpiscope", " ".join(cmd[3:]), flush=True)
    start = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True, cwd=cwd)  # progress: our stderr
    print(f"  ({time.monotonic() - start:.0f} s, exit {p.returncode})", flush=True)
    if p.returncode not in ok:
        raise RuntimeError(f"mpiscope {words[0]} failed (exit {p.returncode}); its messages above")
    return json.loads(p.stdout) if json_out and p.stdout.strip().startswith("{") else None


def chosen_cells(profile, min_share):
    """(collectives, sizes) to tune: the blocking calls on all ranks that carry
    at least `min_share` of the application's time, at the middle of their
    size bins (the size a bin stands for in the weights and the prediction)."""
    picked = [
        c
        for c in profile.cells
        if c.blocking
        and c.comm_size == profile.np
        and c.collective in TUNABLE
        and c.time_s >= min_share * profile.wall_s
    ]
    colls = list(dict.fromkeys(c.collective for c in sorted(picked, key=lambda c: -c.time_s)))
    sizes = sorted({bin_size(c.lo, c.hi) for c in picked})
    return colls, sizes


def where_time_goes(app, mpi, profile):
    """Rows: the profile's collective cells with at least 1% of the application's time."""
    rows = []
    for c in sorted(profile.cells, key=lambda c: -c.time_s):
        if c.time_s >= 0.01 * profile.wall_s:
            rows.append(
                [
                    app,
                    mpi,
                    c.collective + ("" if c.blocking else " (nonblocking)"),
                    c.comm_size,
                    f"{c.lo}-{c.hi}",
                    c.calls,
                    c.time_s / profile.wall_s,
                ]
            )
    return rows


def loop(app: App, cluster, out: Path, work: Path, pingpong: str, args) -> dict:
    """The chain for one application; every step's output kept in `out`."""
    where = app.prepare(work / app.name)
    on = ["--cluster", cluster, "--mpi", app.mpi, "-n", HOSTS, "--out", out]
    label = f"{app.name}-{app.mpi}"
    mpiscope("profile", *on, "--trace", "--label", f"prof-{label}", "--json", "--", *app.command, cwd=where)
    prof_dir = _resolve(out, f"prof-{label}")
    profile = profile_times(prof_dir)
    colls, sizes = chosen_cells(profile, args.min_share)
    result = {
        "app": app.name,
        "mpi": app.mpi,
        "profile": prof_dir.name,
        "wall_per_rank_s": profile.wall_per_rank_s,
        "collective_share": sum(c.time_s for c in profile.cells) / profile.wall_s,
        "where": where_time_goes(app.name, app.mpi, profile),
        "collectives": colls,
        "sizes": sizes,
    }
    if not colls:
        result["skipped"] = f"no tunable collective carries {100 * args.min_share:g}% of the time"
        return result
    weights = out / f"weights-{label}.json"
    mpiscope("profile", "weights", prof_dir, "-o", weights, "--out", out, json_out=False)
    tune_dir = out / f"tune-{label}"
    tune = mpiscope(
        "tune",
        "--cluster",
        cluster,
        "--mpi",
        app.mpi,
        "-n",
        HOSTS,
        "--coll",
        ",".join(colls),
        "--sizes",
        ",".join(map(str, sizes)),
        "--weights",
        weights,
        "--time-budget",
        args.tune_budget,
        "-o",
        tune_dir,
        "--json",
    )
    result["tune"] = {
        "dir": str(tune_dir),
        "verification": tune["verification"],
        "rules": tune["rules"],
        "withdrawn": tune.get("withdrawn"),
        "weighted": tune.get("weighted"),
    }
    doc = mpiscope(
        "app",
        "compare",
        *on,
        "--profile",
        prof_dir,
        "--tune",
        tune_dir,
        "--whatif-p",
        WHATIF_P,
        "--from-run",
        pingpong,
        "--p2p",
        "pingpong",
        "--label",
        f"app-{label}",
        "--time-budget",
        args.compare_budget,
        "--launch-timeout",
        round(max(30.0, 4 * profile.wall_per_rank_s)),
        "--max-rounds",
        args.max_rounds,
        "--json",
        "--",
        *app.command,
        cwd=where,
        ok=(0, 1, 2),
    )
    if doc is None:
        result["skipped"] = "app compare ran nothing (its message above: the tune changed nothing?)"
        return result
    result["app_run"] = doc
    # The traced rank count again, whole and with every collective left as traced (the point-to-point
    # part alone simulated), with each benchmark's costs.
    untuned = out / f"untuned-{label}"
    untuned.mkdir(exist_ok=True)
    library = json.loads((tune_dir / "tune.json").read_text())["library"]
    (untuned / "tune.json").write_text(
        json.dumps({"library": library, "p": HOSTS, "rules": {}, "verification": {"cells": []}})
    )
    limit = (doc.get("whatif") or {}).get("eager_limit")  # the library's, as the what-if took it
    eager = (
        {"library's limit": ("--eager", int(limit)), "every message eager": ()}
        if limit
        else {"every message eager": ()}
    )
    result["validation"] = {
        f"{part}, {costs}, {how}": mpiscope(
            "sim",
            "whatif",
            "--from-trace",
            prof_dir,
            "--tune",
            tune,
            "-p",
            HOSTS,
            "--from-run",
            pingpong,
            *p2p,
            *eager[how],
            "--sample",
            "--replicates",
            10,
            "--out",
            out,
            "--json",
            ok=(0, 1, 2),
        )
        for part, tune in (("all", tune_dir), ("point-to-point", untuned))
        for costs, p2p in COSTS.items()
        for how in eager
        if how == next(iter(eager)) or (part, costs) == ("all", "pingpong")
    }
    if args.reports:
        mpiscope("report", doc["run_id"], "--out", out, "-o", Path(args.reports) / f"app-{label}.html", json_out=False)
    return result


def _resolve(out, ref):
    from mpiscope.store import catalog

    return catalog.resolve(out, ref)


def coll_speedup(prediction) -> float | None:
    """The tuned collectives' own speedup over the application's verified cells, time-weighted."""
    ver = [c for c in prediction.get("cells") or () if c["status"] == "verified"]
    t = sum(c["time_s"] for c in ver)
    return t / sum(c["time_s"] / c["speedup"] for c in ver) if ver and t > 0 else None


def answer_row(r):
    """The loop's answer for one application: numbers and the targets."""
    doc = r.get("app_run") or {}
    res = {x["config"]: x for x in doc.get("results") or ()}
    p = doc.get("prediction") or {}
    m = (res.get(p.get("config")) or {}).get("speedup") or {}
    share, sc = p.get("collective_share"), coll_speedup(p)
    verdict = (res.get(p.get("config")) or {}).get("verdict")
    not_slower = None if not m else verdict != "slower"
    applies = bool(share is not None and sc is not None and share >= 0.2 and sc >= 1.5)
    strong = (m.get("point", 0) >= 1.1 and p["low"] <= m["point"] <= p["high"]) if applies and m else None
    return [
        r["app"],
        r["mpi"],
        ",".join(r["collectives"]) or "-",
        share,
        sc,
        m.get("point"),
        m.get("low"),
        m.get("high"),
        p.get("speedup"),
        p.get("low"),
        p.get("high"),
        None if "agree" not in p else ("yes" if p["agree"] else "no"),
        verdict or r.get("skipped"),
        "-" if not_slower is None else ("yes" if not_slower else "NO"),
        "n/a" if not applies else ("yes" if strong else "NO"),
    ]


def validation_note(r, w):
    """The traced rank count: what the trace measured, and the simulation's
    error with the what-if's costs (the pingpong's) and with exchanges
    from the ring or the ring's alone."""
    kept = w["validation"]["kept_share"]
    note = f"traced: {w['traced_comm_s']:.3g} s; simulated {100 * w['error']:+.0f}%" + (
        f" ({100 * kept:.0f}% of it left as traced)" if kept >= 0.01 else ""
    )
    checks = (r.get("validation") or {}).items()
    others = [
        (k.split(", ", 1)[1], v) for k, v in checks if k.startswith("all, ") and k != "all, pingpong, library's limit"
    ]
    return note + "".join(f"; {c}: {100 * v['error']:+.0f}%" for c, v in others if "error" in v)


def traced_count_row(r):
    """The what-if of `app compare` at the traced rank count against the
    trace: its time in communication per rank, measured and simulated, the
    eager limit it took, and the target (within 15%)."""
    w = ((r.get("app_run") or {}).get("whatif")) or {}
    if not w or w.get("failed"):
        return [r["app"], r["mpi"], None, None, None, None, w.get("failed") or "none", None]
    simulated, limit = w["validation"]["default"]["median_s"], w.get("eager_limit")
    return [
        r["app"],
        r["mpi"],
        w["traced_comm_s"],
        simulated,
        w["error"],
        limit,
        w.get("eager_from") or "every message eager",
        "yes" if abs(w["error"]) <= TRACED_WITHIN else "NO",
    ]


def validation_rows(r):
    """The traced rank count's time in communication: measured, and simulated
    whole and with every collective left as traced (the point-to-point part
    alone simulated), with each benchmark's costs."""
    rows = []
    for key, w in (r.get("validation") or {}).items():
        if w and "error" in w:
            v = w["validation"]
            rows.append(
                [
                    r["app"],
                    r["mpi"],
                    *key.split(", "),
                    w["traced_comm_s"],
                    v["default"]["median_s"],
                    w["error"],
                    v["kept_share"] * v["default"]["median_s"],
                ]
            )
    return rows


def whatif_rows(r):
    w = ((r.get("app_run") or {}).get("whatif")) or {}
    if not w or w.get("failed"):
        return [[r["app"], r["mpi"], None, None, None, None, None, None, w.get("failed") or "none"]]
    rows = []
    for x in [w["validation"], *w["points"]]:
        rows.append(
            [
                r["app"],
                r["mpi"],
                x["p"],
                x["default"]["median_s"],
                x["tuned"]["median_s"],
                x["speedup"]["median"],
                x["speedup"]["low"],
                x["speedup"]["high"],
                validation_note(r, w) if x is w["validation"] else "",
            ]
        )
    return rows


def costs_rows(out, pingpong):
    """The Hockney fits of the costs run's pingpong and ring: what a message
    costs alone and with every rank sending at once."""
    from mpiscope.sim.measured import fitted_costs

    run = _resolve(out, pingpong)
    return {p2p: {"alpha_s": c.alpha_s, "G": c.G} for p2p in ("pingpong", "ring") for c in [fitted_costs(run, p2p)]}


def main():
    ap = benchjson.parser(__doc__)
    ap.add_argument("--apps", default=",".join(APPS), help="applications, comma separated (default %(default)s)")
    ap.add_argument(
        "--min-share",
        type=float,
        default=0.02,
        help="a collective cell is tuned when it carries this share of the time (default %(default)s)",
    )
    ap.add_argument(
        "--tune-budget", type=float, default=0.5, help="tune --time-budget: seconds per series (default %(default)s)"
    )
    ap.add_argument(
        "--compare-budget", type=float, default=420, help="app compare --time-budget, seconds (default %(default)s)"
    )
    ap.add_argument("--max-rounds", type=int, default=20, help="app compare --max-rounds (default %(default)s)")
    ap.add_argument("--keep", metavar="DIR", help="keep every run, tune and weights file in DIR")
    ap.add_argument("--reports", metavar="DIR", help="write each app run's report into DIR")
    args = benchjson.parse(ap)
    apps = [a.strip() for a in args.apps.split(",")]
    unknown = [a for a in apps if a not in APPS]
    if unknown:
        ap.error(f"--apps: unknown {', '.join(unknown)}; choose from {', '.join(APPS)}")
    if os.geteuid() != 0:
        sys.exit("emulated clusters need root")
    missing = [APPS[a].command[0] for a in apps if shutil.which(APPS[a].command[0]) is None]
    if missing:
        sys.exit(f"not installed: {', '.join(missing)} (scripts/setup-system.sh installs them)")
    if args.reports:
        Path(args.reports).mkdir(parents=True, exist_ok=True)

    results = []
    with tempfile.TemporaryDirectory(prefix="app-loop-") as tmp:
        out = Path(args.keep).resolve() if args.keep else Path(tmp) / "runs"
        work = Path(tmp) / "work"
        with Cluster("l", HOSTS, 1, preset="fast-ethernet") as cluster:
            pingpong, costs = {}, {}
            for mpi in dict.fromkeys(APPS[a].mpi for a in apps):
                mpiscope(
                    "run",
                    "--cluster",
                    cluster,
                    "--mpi",
                    mpi,
                    "-n",
                    HOSTS,
                    "--bench",
                    "pingpong,ring",
                    "--sizes",
                    "8-1M:x4",
                    "--time-budget",
                    1,
                    "--label",
                    f"pp-{mpi}",
                    "--out",
                    out,
                    "--json",
                    json_out=False,
                )
                pingpong[mpi] = f"pp-{mpi}"
                costs[mpi] = costs_rows(out, pingpong[mpi])
            for a in apps:
                app = APPS[a]
                try:
                    results.append(loop(app, cluster, out, work, pingpong[app.mpi], args))
                except RuntimeError as exc:
                    results.append(
                        {"app": app.name, "mpi": app.mpi, "collectives": [], "skipped": str(exc), "where": []}
                    )

    show = benchjson.show
    print(f"\n{HOSTS} hosts of the emulated Fast Ethernet cluster, one rank each\n")
    tables = [
        show(
            "where the time goes: collective cells with at least 1% of the application's time (profile)",
            ["application", "MPI", "collective", "ranks", "size B", "calls", "share of time"],
            [row for r in results for row in r["where"]],
            ["share: time inside the calls over the application's time, both summed over ranks"],
        )
    ]
    tables.append(
        show(
            "the loop's answer: measured against predicted speedup of the tuned configuration",
            [
                "application",
                "MPI",
                "tuned",
                "share in tuned cells",
                "their speedup",
                "measured",
                "CI low",
                "CI high",
                "predicted",
                "CI low",
                "CI high",
                "agree",
                "verdict",
                "not slower",
                "strong case met",
            ],
            [answer_row(r) for r in results],
            [
                "speedup: the default's median wall time / the tuned one's; intervals 95% (measured: bootstrap over "
                "launches; predicted: Monte Carlo over the verified cells' intervals, times the launches' "
                "spread: the measured interval's log-scale standard deviation)",
                "targets: not slower beyond the noise threshold; where the tuned cells carry >= 20% of the time and "
                "are >= 1.5x faster, measured >= 1.1 and inside the predicted interval ('n/a': not such a case)",
            ],
        )
    )
    tables.append(
        show(
            "what-if at more ranks: time in communication per rank (simulated, s)",
            ["application", "MPI", "ranks", "default", "tuned", "speedup", "CI low", "CI high", "note"],
            [row for r in results for row in whatif_rows(r)],
            [
                f"the traced profile's rank count simulated against what it measured, then its pattern "
                f"replicated to {WHATIF_P} ranks; costs: the cluster's pingpong (one message, the other "
                f"ranks idle); the note compares exchanges (a message with one the other way at once) "
                f"charged from its ring at {HOSTS} ranks, and the ring alone"
            ],
        )
    )
    tables.append(
        show(
            "app compare's what-if at the traced rank count against the trace (target: within 15%)",
            ["application", "MPI", "traced s", "simulated s", "error", "eager limit B", "eager limit from", "within"],
            [traced_count_row(r) for r in results],
            [
                "time in communication per rank, mean over ranks; simulated with the pingpong's costs, every "
                "message above the MPI library's eager limit on the traced transport by rendezvous"
            ],
        )
    )
    tables.append(
        show(
            "the traced rank count: time in communication per rank, measured and simulated (s)",
            ["application", "MPI", "simulated", "costs", "eager", "traced", "simulated", "error", "left as traced"],
            [row for r in results for row in validation_rows(r)],
            [
                "simulated 'all': every collective our algorithm of the default's structure (where the "
                "default was read); 'point-to-point': every collective left as its traced time, so the "
                "error is the point-to-point part's alone",
                "costs: the per-size distributions of the cluster's pingpong with every exchange drawn from "
                "its ring (pingpong+exchange), of its pingpong alone, or of its ring alone",
                "eager: messages above the library's eager limit (app compare's what-if's) by rendezvous, or "
                "every message eager",
            ],
        )
    )
    tables.append(
        show(
            "the what-if's costs: Hockney fits of the cluster's point-to-point runs",
            ["MPI", "benchmark", "alpha us", "beta ns/B"],
            [[m, b, 1e6 * c["alpha_s"], 1e9 * c["G"]] for m, fits in costs.items() for b, c in fits.items()],
            [
                f"{HOSTS} ranks, one per host; pingpong: ranks 0 and 1, one message at a time; ring: "
                "every rank sends to its right neighbour while it receives from its left"
            ],
        )
    )
    mpis = {"openmpi": "mpicc.openmpi", "mpich": "mpicc.mpich"}
    benchjson.write(
        args,
        "app_loop",
        tables,
        {"apps": results, "costs": costs},
        mpi=benchjson.mpi_names(*(mpis[m] for m in dict.fromkeys(APPS[a].mpi for a in apps))),
    )


if __name__ == "__main__":
    main()
