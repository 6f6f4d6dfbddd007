# SPDX-License-Identifier: BSD-3-Clause
"""Everything the report shows, gathered from stored runs as plain data and
inline SVG figures (the template only lays it out)."""

import datetime
import math
from pathlib import Path

import numpy as np

from mpiscope.store import samples as _samples
from mpiscope.stats.analysis import analyze_series
from mpiscope.stats.compare import compare
from mpiscope.common.errors import UsageError
from mpiscope.models.fits import fit_series
from mpiscope.stats.ranks import rank_times
from mpiscope.stats.summary import summarize
from mpiscope.report.timechart import report_chart
from mpiscope.report.sim_data import sim_views
from mpiscope.store.ingest import load
from mpiscope.store.series import all_series_samples, bench_label
from mpiscope.report.card_data import card
from mpiscope.report.loggp_data import layer_views, loggp_views
from mpiscope.report.transport_data import transport_views
from mpiscope.report.tune_data import tune_views
from mpiscope.report.methods_data import methods_views
from mpiscope.stats import quality
from mpiscope.report.pool import draw, resolved

US = 1e6
MBPS = 1e-6


def _display(unit, values):
    """Samples in display units: µs for times, MB/s for bandwidths."""
    factor = MBPS if unit == "B/s" else US
    return np.asarray(values, dtype=float) * factor


def display_unit(unit):
    return "MB/s" if unit == "B/s" else "µs"


def run_summary(run_dir, table, run):
    """The run's identity and context, for the header and the context section."""
    clock = []
    for launch, ranks in sorted(run.clock.items(), key=lambda kv: int(kv[0])):
        for rank, c in sorted(ranks.items(), key=lambda kv: int(kv[0])):
            rec = c.get("recovery_error_s") or {}
            clock.append(
                {
                    "launch": launch,
                    "rank": rank,
                    "host": c.get("host"),
                    "cpus": c.get("cpus"),
                    "residual_ns": _ns(c.get("residual_s")),
                    "drift_ppm": _ppm(c.get("model")),
                    "recovery_start_ns": _ns(rec.get("start")),
                    "recovery_end_ns": _ns(rec.get("end")),
                }
            )
    timer = run.timer
    return {
        "id": run.run_id,
        "path": str(run_dir),
        "status": run.status,
        "error": run.error,
        "created": run.created,
        "library": run.mpi_library or run.mpi,
        "mpi": run.mpi,
        "np": run.np,
        "hosts": run.hosts or {},
        "timer": f"{timer.get('name')} (read {_ns(timer.get('cost_s'))} ns, resolution "
        f"{_ns(timer.get('resolution_s'))} ns)"
        if timer
        else "",
        "sync": run.sync_method,
        "cache": run.cache,
        "launches": run.launches,
        "seed": run.seed,
        "git_sha": run.git_sha,
        "command": " ".join(map(str, run.command)),
        "clock": clock,
        "max_residual_ns": max((c["residual_ns"] for c in clock if c["residual_ns"] is not None), default=None),
        "samples": table.num_rows,
    }


def _ns(seconds):
    return None if seconds is None or not math.isfinite(seconds) else round(seconds * 1e9, 1)


def _ppm(model):
    return None if not model or model.get("drift") is None else round(model["drift"] * 1e6, 3)


def bench_sections(runs, series, verdicts=None):
    """One section per benchmark (and algorithm) across all runs, each
    complete (its figures on their way) before the next is analysed.

    runs: [(label, run_dir, table, run)]; series: {label: all_series_samples of the run};
    verdicts: {label: the quality verdicts of those series, in their order}."""
    by_key = {}  # (bench, algo) -> {label: (run, [(size, Samples, rows, flags)])}, first-seen order
    for label, _, table, run in runs:
        groups = _samples.split_series(table)
        flags = [v.flags for v in (verdicts or {}).get(label, ())] or [()] * len(series[label])
        for (bench, algo, size, s), f in zip(series[label], flags):
            per_run = by_key.setdefault((bench, algo), {}).setdefault(label, (run, []))
            per_run[1].append((size, s, groups.get((bench, algo, size)), f))
    return [
        _section(bench, algo, {label: _series_entry(bench, run, sizes) for label, (run, sizes) in by_run.items()})
        for (bench, algo), by_run in by_key.items()
    ]


def _series_entry(bench, run, rows):
    """One run's sizes of one benchmark: summaries, samples, rows and analyses."""
    refined = run.refined_sizes.get(bench, [])
    entry = {
        "sizes": [],
        "summaries": [],
        "values": {},
        "refined": refined,
        "tables": {},
        "analysis": {},
        "unit": rows[0][1].unit,
        "collective": rows[0][1].collective,
    }
    for size, s, table, flags in rows:
        values = _display(s.unit, s.values)
        entry["sizes"].append(size)
        st = summarize(values)
        st.update({"size": size, "invalid": s.n_invalid, "refined": size in refined, "flags": list(flags)})
        entry["summaries"].append(st)
        entry["values"][size] = values
        entry["tables"][size] = table
        if table is not None and len(s.values):
            entry["analysis"][size] = analyze_series(table, bench, size, run, seed=run.seed or 1)
    return entry


def _section(bench, algo, runs):
    first = next(iter(runs.values()))
    unit = display_unit(first["unit"])
    curves = {}
    for label, r in runs.items():
        rows = [x for x in r["summaries"] if x["n"] > 0]
        curves[label] = (
            [x["size"] for x in rows],
            [x["median"] for x in rows],
            [x["ci_low"] for x in rows],
            [x["ci_high"] for x in rows],
        )
    refined = sorted({s for r in runs.values() for s in r["refined"]})
    section = {
        "id": f"bench-{bench}-{algo}",
        "title": bench_label(bench, algo),
        "bench": bench,
        "algo": algo,
        "unit": unit,
        "collective": first["collective"],
        "curve_svg": draw("curve", curves, f"median ({unit}) with 95% CI", log_y=True, refined=refined),
        "runs": [],
    }
    for label, r in runs.items():
        run = {
            "label": label,
            "summaries": r["summaries"],
            "ranks": None,
            "dist_svg": draw("distributions", r["values"], unit),
        }
        run.update(_analysis_views(r["analysis"], MBPS if unit == "MB/s" else US))
        if section["collective"]:
            run["ranks"] = _rank_views(r["tables"], r["analysis"])
        section["runs"].append(run)
    return section


def _rank_views(tables, analysis):
    """Heat map of the largest size's per-rank times, per-rank min/median/max,
    and which rank finishes last how often."""
    rows = []
    sizes = [size for size in sorted(tables) if tables[size] is not None and tables[size].num_rows]
    for size in sizes:
        slow = (analysis.get(size) or {}).get("ranks") or {}
        for r in slow.get("ranks", []):
            rows.append(
                {
                    "size": size,
                    "rank": r["rank"],
                    "min": _us(r["time_min_s"]),
                    "median": _us(r["time_median_s"]),
                    "max": _us(r["time_max_s"]),
                    "last_share": r["last_share"],
                    "margin": _us(r["margin_median_s"]),
                }
            )
    if not sizes:
        return {"rows": rows, "heat_size": None, "heat_svg": None}
    rt = rank_times(tables[sizes[-1]])  # only the largest size is drawn
    heat = (rt.times[rt.launch == 0] * US).T
    return {"rows": rows, "heat_size": sizes[-1], "heat_svg": draw("heatmap", heat, clabel="per-rank time (µs)")}


def _us(seconds):
    return None if seconds is None else seconds * US


def _analysis_views(analysis, factor):
    """Tail tables, modes (with the retransmission-timeout flag) and launch
    variation (in display units: values times `factor`), per size, as rows
    for the template."""
    tails_min, tails_sd, modes, launches = [], [], [], []
    for size in sorted(analysis):
        a = analysis[size]
        tails = a.get("tails") or {}
        if tails.get("by_min"):
            tails_min.append({"size": size, "shares": [row["share"] for row in tails["by_min"]]})
            tails_sd.append({"size": size, "shares": [row["share"] for row in tails["by_sd"]]})
        m = a.get("modes") or {}
        for mode in m.get("modes", []):
            if len(m["modes"]) > 1:
                modes.append(
                    {
                        "size": size,
                        "location_us": mode["location"] * US,
                        "weight": mode["weight"],
                        "gap_ms": mode["gap_s"] * 1e3,
                        "rto": mode["rto_suspect"],
                        "rto_multiple": mode["rto_multiple"],
                        "sources": ", ".join(
                            f"{x['source']} ({100 * x['share_of_mode']:.0f}%)" for x in mode["sources"][:3]
                        ),
                    }
                )
        lv = a.get("launches") or {}
        if lv.get("n_launches", 1) > 1:
            launches.append(
                {
                    "size": size,
                    "n": lv["n_launches"],
                    "between": lv["between_sd"] * factor,
                    "within": lv["within_sd"] * factor,
                    "icc": lv["icc"],
                    "p": (lv.get("test") or {}).get("p_value"),
                }
            )
    first = next(iter(analysis.values()), None) or {}
    labels_min = [row["label"] for row in ((first.get("tails") or {}).get("by_min") or [])]
    labels_sd = [row["label"] for row in ((first.get("tails") or {}).get("by_sd") or [])]
    rto = (first.get("modes") or {}).get("rto") or {}
    return {
        "tails_min": tails_min,
        "tails_sd": tails_sd,
        "tail_labels_min": labels_min,
        "tail_labels_sd": labels_sd,
        "modes": modes,
        "launch_rows": launches,
        "rto_note": f"{rto.get('rto_min_s', 0.2) * 1e3:g} ms ({rto.get('source', 'default')})" if rto else "",
    }


def fit_views(series, run, seed):
    """Hockney and piecewise fits of every benchmark of one run (its
    series.all_series_samples and the run; as fits.fit_run), with figures."""
    out = {}
    for f in fit_series(series, run, seed=seed).fits:
        c = f.curve
        if f.piecewise is None or len(c.sizes) == 0:
            out[(c.bench, c.algo)] = {"note": f.note or "not enough sizes to fit", "svg": None, "flags": []}
            continue
        predicted = np.empty(len(c.sizes))
        for seg in f.piecewise.segments:
            inside = (c.sizes >= seg.first_size) & (c.sizes <= seg.last_size)
            predicted[inside] = seg.alpha.point + seg.beta.point * c.sizes[inside]
        breaks = [np.sqrt(lo * hi) for lo, hi in f.piecewise.breaks]
        out[(c.bench, c.algo)] = {
            "note": f.note,
            "quantity": c.quantity,
            "svg": draw("fit_residuals", c.sizes, c.medians * US, predicted * US, breaks, "median time (µs)"),
            "hockney": _line_row(f.hockney) if f.hockney else None,
            "segments": [_line_row(seg) for seg in f.piecewise.segments],
            "breaks": [f"{lo}–{hi}" for lo, hi in f.piecewise.breaks],
            "flags": f.flags,
        }
    return out


def _line_row(line):
    return {
        "sizes": f"{line.first_size}–{line.last_size}",
        "n": line.n_sizes,
        "alpha_us": line.alpha.scaled(US),
        "beta_ns": line.beta.scaled(1e9),
        # 1/β only where β > 0: otherwise it is no bandwidth.
        "bandwidth_mbs": line.bandwidth.scaled(MBPS) if line.beta.point > 0 else None,
        "n_half": line.n_half,
        "r2": line.r2,
        "max_res": line.max_rel_residual,
    }


def comparisons(run_dirs, seed):
    """Every later run against the first; a pair with nothing in common says so."""
    out = []
    for other in run_dirs[1:]:
        try:
            c = compare(run_dirs[0], other, seed=seed)
        except UsageError as e:
            out.append({"a": str(run_dirs[0].name), "b": str(other.name), "error": str(e)})
            continue
        out.append(
            {
                "a": c.run_a,
                "b": c.run_b,
                "error": None,
                "noise": c.noise,
                "alpha": c.alpha,
                "rows": [_compare_row(r) for r in c.rows],
                "geomean": c.geomean,
                "only_a": [f"{b} {s}" for b, _, s in c.only_a],
                "only_b": [f"{b} {s}" for b, _, s in c.only_b],
            }
        )
    return out


def _compare_row(r):
    factor = MBPS if r.unit == "B/s" else US
    return {
        "bench": bench_label(r.bench, r.algo),
        "size": r.size,
        "unit": display_unit(r.unit),
        "a": r.median_a * factor,
        "b": r.median_b * factor,
        "ratio": r.ratio,
        "p": r.p_value,
        "verdict": r.verdict,
    }


def gather(run_dirs):
    """All the data of a report on `run_dirs` (the first is the baseline).
    Figures go to the worker processes of pool.drawing() when it is active,
    each as soon as its data is ready; the workers only draw (computing
    there would need the analysis modules, and SciPy, imported again)."""
    runs = []
    for run_dir in run_dirs:
        table, run = load(run_dir)
        runs.append((run.run_id, run_dir, table, run))
    seed = runs[0][3].seed or 1
    # Every view below starts from the same samples: derive them once.
    series = {label: all_series_samples(table, run) for label, _, table, run in runs}
    verdicts = {label: quality.verdicts_of(d, series[label], run) for label, d, _, run in runs}
    # Fits first: their figures then are not the last the workers get.
    fits = {label: fit_views(series[label], run, seed) for label, _, _, run in runs}
    sections = bench_sections(runs, series, verdicts)
    for s in sections:
        s["fits"] = [
            {"label": label, **fits[label][key]}
            for label in fits
            for key in [(s["bench"], s["algo"])]
            if key in fits[label]
        ]
        # Time chart of a traced algorithm (mpiscope run --trace), from the first run that has one.
        s["timechart"] = next(filter(None, (report_chart(d, s["bench"], s["algo"], t) for _, d, t, _ in runs)), None)
    return resolved(
        {
            "generated": datetime.datetime.now().isoformat(timespec="seconds"),
            "runs": [run_summary(d, t, c) for _, d, t, c in runs],
            "cards": [card(label, series[label], verdicts[label], run) for label, _, _, run in runs],
            "sections": sections,
            "comparisons": comparisons([Path(d) for _, d, _, _ in runs], seed),
            # LogGP parameters and layers, for the runs that measured them (loggp_data.py).
            "loggp": loggp_views(runs, series, seed),
            "layers": layer_views(runs, series, seed),
            # Our algorithms simulated next to measured (sim_data.py).
            "sim": sim_views(runs, series),
            # The transport lab over all the runs (transport_data.py).
            "transport": transport_views(runs),
            # The tune outputs the runs belong to (tune_data.py).
            "tune": tune_views([d for _, d, _, _ in runs]),
            # The peers' methods of the runs measured with --methods (methods_data.py).
            "methods": methods_views(runs),
        }
    )
