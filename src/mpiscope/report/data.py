"""Everything the report shows, gathered from stored runs as plain data and
inline SVG figures (the template only lays it out)."""

import datetime
import math

import numpy as np
import pyarrow.compute as pc

from .. import samples as _samples
from ..stats import summarize
from ..store import load
from ..views import all_series_samples, bench_label
from . import plots

US = 1e6
MBPS = 1e-6


def _display(bench, values):
    """Samples in display units: µs for times, MB/s for bandwidths."""
    factor = MBPS if _samples.unit(bench) == "B/s" else US
    return np.asarray(values, dtype=float) * factor


def display_unit(bench):
    return "MB/s" if _samples.unit(bench) == "B/s" else "µs"


def run_summary(run_dir, table, ctx):
    """The run's identity and context, for the header and the context section."""
    clock = []
    for launch, ranks in sorted(ctx.get("clock", {}).items(), key=lambda kv: int(kv[0])):
        for rank, c in sorted(ranks.items(), key=lambda kv: int(kv[0])):
            rec = c.get("recovery_error_s") or {}
            clock.append({"launch": launch, "rank": rank, "host": c.get("host"), "cpus": c.get("cpus"),
                          "residual_ns": _ns(c.get("residual_s")), "drift_ppm": _ppm(c.get("model")),
                          "recovery_start_ns": _ns(rec.get("start")), "recovery_end_ns": _ns(rec.get("end"))})
    timer = ctx.get("timer") or {}
    return {
        "id": ctx.get("run_id", str(run_dir)),
        "path": str(run_dir),
        "status": ctx.get("status"),
        "error": ctx.get("error"),
        "created": ctx.get("created"),
        "library": ctx.get("mpi_library") or ctx.get("mpi"),
        "mpi": ctx.get("mpi"),
        "np": ctx.get("np"),
        "hosts": ctx.get("hosts") or {},
        "timer": f"{timer.get('name')} (read {_ns(timer.get('cost_s'))} ns, resolution "
                 f"{_ns(timer.get('resolution_s'))} ns)" if timer else "",
        "sync": ctx.get("sync_method"),
        "cache": ctx.get("cache"),
        "launches": ctx.get("launches"),
        "seed": ctx.get("seed"),
        "git_sha": ctx.get("git_sha"),
        "command": " ".join(map(str, ctx.get("command") or [])),
        "clock": clock,
        "max_residual_ns": max((c["residual_ns"] for c in clock if c["residual_ns"] is not None),
                               default=None),
        "samples": table.num_rows,
    }


def _ns(seconds):
    return None if seconds is None or not math.isfinite(seconds) else round(seconds * 1e9, 1)


def _ppm(model):
    return None if not model or model.get("drift") is None else round(model["drift"] * 1e6, 3)


def _rank_matrix(series_table):
    """Per-rank time of each repetition of launch 0: end − agreed start (window
    sync) or end − own start (barrier sync), in µs; ranks × repetitions."""
    t = series_table.filter(pc.equal(series_table["launch"], 0))
    if t.num_rows == 0:
        return None, []
    rank = t["rank"].to_numpy()
    rep = t["rep"].to_numpy()
    end = t["t_end"].to_numpy()
    start = t["t_start"].to_numpy()
    sched = t["t_sched"].to_numpy()
    agreed = {}
    for r, s, k in zip(rank, sched, rep):
        if r == rank.min():
            agreed[k] = s
    base = np.array([agreed.get(k, np.nan) for k in rep])
    dur = np.where(np.isfinite(base), end - base, end - start) * US
    ranks = sorted(set(rank.tolist()))
    reps = sorted(set(rep.tolist()))
    m = np.full((len(ranks), len(reps)), np.nan)
    ri = {r: i for i, r in enumerate(ranks)}
    ci = {k: i for i, k in enumerate(reps)}
    for r, k, d in zip(rank, rep, dur):
        m[ri[r], ci[k]] = d
    return m, ranks


def bench_sections(runs):
    """One section per benchmark (and algorithm) across all runs.

    runs: [(label, run_dir, table, ctx)]."""
    order, by_key = [], {}
    for label, _, table, ctx in runs:
        refined = ctx.get("refined_sizes") or {}
        groups = _samples.split_series(table)
        for bench, algo, size, s in all_series_samples(table, ctx):
            key = (bench, algo)
            if key not in by_key:
                by_key[key] = {"runs": {}}
                order.append(key)
            entry = by_key[key]["runs"].setdefault(label, {"sizes": [], "summaries": [], "values": {},
                                                           "refined": refined.get(bench, []),
                                                           "tables": {}})
            entry["sizes"].append(size)
            st = summarize(_display(bench, s.values))
            st.update({"size": size, "invalid": s.n_invalid, "refined": size in entry["refined"]})
            entry["summaries"].append(st)
            entry["values"][size] = _display(bench, s.values)
            entry["tables"][size] = groups.get((bench, algo, size))
    return [_section(bench, algo, by_key[(bench, algo)]["runs"]) for bench, algo in order]


def _section(bench, algo, runs):
    unit = display_unit(bench)
    curves = {}
    for label, r in runs.items():
        rows = [x for x in r["summaries"] if x["n"] > 0]
        curves[label] = ([x["size"] for x in rows], [x["median"] for x in rows],
                         [x["ci_low"] for x in rows], [x["ci_high"] for x in rows])
    refined = sorted({s for r in runs.values() for s in r["refined"]})
    section = {
        "id": f"bench-{bench}-{algo}",
        "title": bench_label(bench, algo),
        "bench": bench,
        "unit": unit,
        "collective": _samples.is_collective(bench),
        "curve_svg": plots.curve(curves, f"median ({unit}) with 95% CI", log_y=True, refined=refined),
        "runs": [],
    }
    for label, r in runs.items():
        run = {"label": label, "summaries": r["summaries"], "ranks": None,
               "dist_svg": plots.distributions(r["values"], unit)}
        if section["collective"]:
            run["ranks"] = _rank_views(r["tables"])
        section["runs"].append(run)
    return section


def _rank_views(tables):
    """Heat map of the largest size's per-rank times, and per-rank min/median/max per size."""
    rows, heat = [], None
    for size in sorted(tables):
        t = tables[size]
        if t is None or t.num_rows == 0:
            continue
        m, ranks = _rank_matrix(t)
        if m is None:
            continue
        for i, r in enumerate(ranks):
            v = m[i][np.isfinite(m[i])]
            if len(v):
                rows.append({"size": size, "rank": r, "min": float(v.min()),
                             "median": float(np.median(v)), "max": float(v.max())})
        heat = (size, m)
    svg = plots.heatmap(heat[1], clabel="per-rank time (µs)") if heat else None
    return {"rows": rows, "heat_size": heat[0] if heat else None, "heat_svg": svg}


def gather(run_dirs):
    """All the data of a report on `run_dirs` (the first is the baseline)."""
    runs = []
    for run_dir in run_dirs:
        table, ctx = load(run_dir)
        runs.append((ctx.get("run_id", str(run_dir)), run_dir, table, ctx))
    return {
        "generated": datetime.datetime.now().isoformat(timespec="seconds"),
        "runs": [run_summary(d, t, c) for _, d, t, c in runs],
        "sections": bench_sections(runs),
    }
