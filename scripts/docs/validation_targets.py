# SPDX-License-Identifier: BSD-3-Clause
"""Every target a validation page states, decided from the page's own bench
JSON: each target names its JSON file, how its measured value is read from
the tables there, and the limit. The validation index and Known limitations
are rendered from these verdicts (scripts/docs/validation_data.py), so a page,
its index row and its limitation cannot disagree. A missed target names the
section of Known limitations that says why."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

VALIDATION = Path(__file__).resolve().parents[2] / "docs" / "validation"


@dataclass(frozen=True)
class Target:
    page: str           # the validation page, docs/validation/<page>
    data: str           # its bench JSON, beside the page
    target: str         # the target, as the page states it
    measure: Callable[[dict], tuple[str, bool]]  # the document -> (measured, met)
    limitation: str = ""  # the Known limitations section (its anchor) that explains a miss


@dataclass(frozen=True)
class Verdict:
    target: Target
    measured: str
    met: bool


def rows(doc: dict, title: str) -> list[dict]:
    """The rows of the table whose title starts with `title`, as dicts by
    column; a repeated column name gets ' 2', ' 3' (osu-imb's min/max pairs)."""
    table = next((t for t in doc["tables"] if t["title"].startswith(title)), None)
    if table is None:
        raise KeyError(f"no table titled {title!r}")
    names, seen = [], {}
    for c in table["columns"]:
        seen[c] = seen.get(c, 0) + 1
        names.append(c if seen[c] == 1 else f"{c} {seen[c]}")
    return [dict(zip(names, r)) for r in table["rows"]]


def _g(x: float) -> str:
    return f"{x:.4g}"


def _extreme(word: str, value: float, n: int, unit: str) -> str:
    return f"{word} {_g(value)}{unit}" if n > 1 else f"{_g(value)}{unit}"


def _at_most(limit: float, values: list[float], unit: str = "") -> tuple[str, bool]:
    worst = max(values)
    return _extreme("largest", worst, len(values), unit), worst <= limit


def _at_least(limit: float, values: list[float], unit: str = "") -> tuple[str, bool]:
    least = min(values)
    return _extreme("smallest", least, len(values), unit), least >= limit


def _count(ok: list[bool], what: str) -> tuple[str, bool]:
    return f"{sum(ok)} of {len(ok)} {what}", all(ok)


def _startup(doc: dict, reads_a_run: bool) -> tuple[str, bool]:
    """The start-up ratios of the commands that read a stored run, or of the others."""
    return _at_most(3, [r["median / python -c pass"] for r in rows(doc, "CLI start-up")
                        if ("(one run)" in r["command"]) == reads_a_run], " ×")


# ---- the pages' targets, page by page -------------------------------------------

def _osu_imb_spread(doc):
    ok = []
    for r in rows(doc, "mpiscope beside OSU and IMB"):
        if r["operation"] not in ("pingpong", "bw"):
            continue
        for ratio, lo, hi in (("median/OSU", "min", "max"), ("median/IMB", "min 3", "max 3")):
            if r[ratio] is not None:
                ok.append(r[lo] <= 1 <= r[hi])
    return _count(ok, "ratios")


def _methods_ratio(doc):
    ok = [0.9 <= r[c] <= 1.1 for r in rows(doc, "mpiscope's reproduction")
          for c in ("ours/OSU", "ours/IMB") if r[c] is not None]
    return f"{sum(ok)} of {len(ok)} medians ({100 * sum(ok) / len(ok):.0f}%)", sum(ok) >= 0.95 * len(ok)


def _clock_error(doc):
    table = rows(doc, "one clock synchronization")
    worst = {r["ranks"]: max(r["star worst error ns"], r["tree worst error ns"]) for r in table}
    text = ", ".join(f"{_g(v)} ns at {p} ranks" for p, v in worst.items())
    return text, max(worst.values()) <= 100


def _clock_cost(doc):
    table = rows(doc, "one clock synchronization")
    first, last = table[0], table[-1]
    growth = last["tree ms"] / first["tree ms"]
    bound = math.log2(last["ranks"]) / math.log2(first["ranks"])
    return (f"{_g(growth)} × from {first['ranks']} to {last['ranks']} ranks "
            f"(log p: {_g(bound)} ×)"), growth <= bound


def _start_monotone(doc):
    table = rows(doc, "start schemes")
    return _count([r["trials monotone 2-16 KiB"] == r["trials"] for r in table], "ways")


def _oneway(doc):
    median = next(r for r in rows(doc, "8 bytes, one-way") if r["trial"] == "median")
    ratio = median["oneway / half RTT"]
    return _g(ratio), abs(ratio - 1) <= 0.3


def _loggp(doc):
    devs = [abs(r[c] - 1) for r in rows(doc, "recovered overheads")
            for c in ("o_s / injected", "o_r / injected")]
    return f"largest {_g(100 * max(devs))}% off", max(devs) <= 0.1


def _report_same(doc):
    table = rows(doc, "mpiscope report of a synthetic run")
    return _count([r["same tables as default"] == r["same figures as default"] == "yes" for r in table],
                  "modes")


def _link_rate(doc):
    return _at_most(5, [abs(r["deviation %"]) for r in rows(doc, "rate:")], "% off")


def _link_delay(doc):
    return _at_most(10, [abs(r["added / D - 1 %"]) for r in rows(doc, "delay:")
                         if r["added / D - 1 %"] is not None], "% off")


def _link_wire(doc):
    return _at_most(10, [abs(r["added / formula - 1 %"]) for r in rows(doc, "wire:")], "% off")


def _scale(name: str, wall: float, gib: float | None = None):
    def measure(doc):
        r = next(r for r in rows(doc, "scale") if r["schedule"] == name)
        met = r["wall s"] <= wall and (gib is None or r["peak GiB"] <= gib)
        return f"{_g(r['wall s'])} s, {_g(r['peak GiB'])} GiB", met
    return measure


def _loggopsim_equal(doc):
    """G = 0 and messages below the rendezvous threshold S, where the two
    models charge the same (the simulator page says where they differ)."""
    title = "finish times, same GOAL file"
    notes = " ".join(next(t for t in doc["tables"] if t["title"].startswith(title)).get("notes", []))
    threshold = int(re.search(r"\bS (\d+)", notes).group(1))
    ok = [r["ours - LogGOPSim ns"] == 0 for r in rows(doc, title)
          if r["parameters"] == "G=0" and int(re.search(r"(\d+) B$", r["schedule"]).group(1)) <= threshold]
    return _count(ok, "schedules equal")


def _sim_measured(goal: Callable[[dict], tuple[str, bool]]):
    def measure(doc):
        parts = [goal(r) for r in rows(doc, "all networks")]
        return "; ".join(p for p, _ in parts), all(ok for _, ok in parts)
    return measure


def _tuner(column: str, limit: float, at_most: bool):
    def measure(doc):
        value = rows(doc, "adaptive against exhaustive")[0][column]
        return f"{_g(value)}%", value <= limit if at_most else value >= limit
    return measure


def _replayed(column: str, judge):
    """The guided search over every replayed tune (bench/tune_search_replay.py)."""
    def measure(doc):
        row = next(r for r in rows(doc, "searches against exhaustive")
                   if r["tune"] == "all" and r["search"] == "guided")
        return f"{_g(row[column])}%", judge(row[column])
    return measure


def _tuner_summary(doc):
    s = rows(doc, "summary")[0]
    return f"{_g(s['geometric mean, cells with a rule'])} ×", s["geometric mean, cells with a rule"] >= 1.2


def _tuner_safe(doc):
    s = rows(doc, "summary")[0]
    slower, in_effect = s["slower than 0.97 beyond noise"], s["file in effect"] == "True"
    return f"{slower} slower; file in effect: {'yes' if in_effect else 'no'}", slower == 0 and in_effect


def _cma(doc):
    return _at_least(0.9, [r["cma / memcpy"] for r in rows(doc, "cma bandwidth") if r["size MiB"] >= 1],
                     " ×")


def _hybrid(doc):
    worst = max(r["worst ratio"] for r in rows(doc, "hybrid / best single design"))
    return f"largest {_g(worst)} ×", worst <= 1.03


def _app_not_slower(doc):
    return _count([r["not slower"] == "yes" for r in rows(doc, "the loop's answer")], "applications")


def _app_strong(doc):
    return _count([r["strong case met"] in ("yes", "n/a") for r in rows(doc, "the loop's answer")],
                  "applications")


def _trace(doc):
    """A cost of tracing would make (nearly) every case slower traced; noise
    makes about half of them slower. A two-sided sign test over the cases'
    ratios tells the two apart."""
    ratios = [r["traced / untraced"] for r in rows(doc, "2 ranks")
              if r["size B"] is not None and r["traced / untraced"] is not None]
    n, slower = len(ratios), sum(r > 1 for r in ratios)
    tail = sum(math.comb(n, k) for k in range(min(slower, n - slower) + 1)) / 2 ** n
    p = min(1.0, 2 * tail)
    return f"{slower} of {n} cases slower traced (sign test p = {p:.2g})", p >= 0.05


def _history_detected(step: str, limit: float):
    def measure(doc):
        r = doc["results"]["one run"]["mpiscope"]
        found, n = r["counts"][step]
        return f"{100 * r['detected'][step]:.0f}% ({found} of {n})", r["detected"][step] >= limit
    return measure


def _history_false(doc):
    per100 = doc["results"]["one run"]["mpiscope"]["false_flags_per_100"]
    return f"{per100:.2f} per 100", per100 <= 1.0


def _history_regression(doc):
    cases = doc["results"]["regression"]
    parts = [f"{c['series']}: " + (", ".join(f"run {i}" for i in c["flagged_at"]) or "none")
             for c in cases]
    ok = any(c["flagged_at"] for c in cases) and all(
        c["flagged_at"] in ([], [c["expected_at"]]) and
        all(any("single_copy" in what for what in named) for named in c["named"]) for c in cases)
    return "; ".join(parts), ok


TARGETS = [
    Target("osu-imb.md", "osu-imb.json",
           "point to point: each ratio's trials on both sides of 1", _osu_imb_spread, "point-to-point-agreement-with-osu"),
    Target("methods-vs-peers.md", "methods-vs-peers.json",
           "≥ 95% of reproduced medians within 0.9–1.1 of the real tool's", _methods_ratio,
           "reproducing-osu-and-imb-on-the-whole-grid"),
    Target("harness-overhead.md", "harness-overhead.json",
           "pingpong ≤ 1.02 × a minimal loop (timer interval off)",
           lambda d: _at_most(1.02, [r["timer interval removed"] for r in rows(d, "ratio pingpong")], " ×")),
    Target("time-to-table.md", "time-to-table.json", "wall time ≤ 1.0 × IMB's",
           lambda d: _at_most(1, [r["ratio mpiscope / IMB"] for r in rows(d, "time to a trustworthy table")
                                  if r["trial"] == "median"], " ×"),
           "time-to-a-trustworthy-table"),
    Target("time-to-table.md", "time-to-table.json", "≥ 95% of series within ±2%",
           lambda d: _at_least(95, [r["series within ±2% CI %"] for r in rows(d, "time to a trustworthy table")
                                    if r["trial"] == "median"], "%")),
    Target("clock.md", "clock.json", "injected offsets recovered within 100 ns", _clock_error,
           "clock-offsets-within-100-ns"),
    Target("clock.md", "clock.json", "the tree's cost growing with log p", _clock_cost,
           "clock-offsets-within-100-ns"),
    Target("start-sync.md", "start-sync.json", "≤ 10% invalid samples",
           lambda d: _at_most(10, [r["invalid %"] for r in rows(d, "start schemes")], "%"),
           "invalid-samples-under-a-cpu-hog"),
    Target("start-sync.md", "start-sync.json", "medians under load ≤ 1.1 × quiet",
           lambda d: _at_most(1.1, [r["largest"] for r in rows(d, "largest ratio")
                                    if r["ratio"].startswith("hog / quiet")], " ×"),
           "invalid-samples-under-a-cpu-hog"),
    Target("start-sync.md", "start-sync.json", "medians with the hog within 3% of barrier starts",
           lambda d: _at_most(3, [abs(r["hog window / hog barrier"] - 1) * 100
                                  for r in rows(d, "median pingpong")], "% off"),
           "invalid-samples-under-a-cpu-hog"),
    Target("start-sync.md", "start-sync.json", "medians rising from 2 to 16 KiB in every trial", _start_monotone,
           "invalid-samples-under-a-cpu-hog"),
    Target("oneway.md", "oneway.json", "one-way / half round trip within 30% of 1", _oneway),
    Target("loggp-overhead.md", "loggp-overhead.json", "o_s, o_r within 10% of the injected overhead", _loggp),
    Target("ingest-scale.md", "ingest-scale.json", "100 M samples ingested and summarized in ≤ 60 s",
           lambda d: _at_most(60, [r["per 100 M samples s"] for r in rows(d, "against the target")], " s"),
           "100-million-samples-in-a-minute"),
    Target("tool-speed.md", "cli-startup.json",
           "`--help`, `runs` of an empty root, `import mpiscope` ≤ 3 × the bare interpreter",
           lambda d: _startup(d, reads_a_run=False)),
    Target("tool-speed.md", "cli-startup.json", "`runs` and `show` of a stored run ≤ 3 × the bare interpreter",
           lambda d: _startup(d, reads_a_run=True), "start-up-against-the-bare-interpreter"),
    Target("tool-speed.md", "report-speed.json", "the report of 323 series in ≤ 60 s",
           lambda d: _at_most(60, [r["median s"] for r in rows(d, "mpiscope report")], " s")),
    Target("tool-speed.md", "report-speed.json", "the same tables and figures with and without workers",
           _report_same),
    Target("link-emulation.md", "link-emulation.json", "rate within 5%", _link_rate,
           "emulated-clusters-on-few-cores"),
    Target("link-emulation.md", "link-emulation.json", "added delay within 10%", _link_delay,
           "short-emulated-delays"),
    Target("link-emulation.md", "link-emulation.json", "one-way time within 10% of the wire formula",
           _link_wire, "emulated-wire-time"),
    Target("link-emulation.md", "link-emulation.json", "no packet reordered by jitter",
           lambda d: _count([r["TCP out-of-order queue"] == 0 for r in rows(d, "jitter")], "streams in order")),
    Target("sim-speed.md", "sim-speed.json", "≥ 20 M events/s on one core",
           lambda d: _at_least(20, [r["M events/s"] for r in rows(d, "event rate")], " M events/s"),
           "simulator-event-rate"),
    Target("sim-speed.md", "sim-speed.json", "bcast at 2^23 ranks in ≤ 30 s and 8 GiB",
           _scale("bcast/binomial", 30, 8)),
    Target("sim-speed.md", "sim-speed.json", "allreduce at 2^20 ranks in ≤ 60 s",
           _scale("allreduce/recursive_doubling", 60)),
    Target("sim-vs-loggopsim.md", "sim-vs-loggopsim.json", "equal finish times where the models agree",
           _loggopsim_equal),
    Target("sim-vs-loggopsim.md", "sim-vs-loggopsim.json", "less CPU time than LogGOPSim (binary forms)",
           lambda d: _at_least(1, [r["CPU ratio, binary forms"] for r in rows(d, "LogGOPSim's process CPU")],
                               " × less")),
    Target("sim-vs-measured.md", "sim-vs-measured.json", "≥ 90% of cells within 15%",
           _sim_measured(lambda r: (f"{r['model']} {_g(r['within 15% %'])}%",
                                                    r["within 15% %"] >= 90)),
           "emulated-clusters-on-few-cores"),
    Target("sim-vs-measured.md", "sim-vs-measured.json", "Kendall's tau ≥ 0.8 everywhere",
           _sim_measured(lambda r: (
               f"{r['model']} {r['tau >= 0.8']} of {r['collective x size with a tau']}",
               r["tau >= 0.8"] == r["collective x size with a tau"])),
           "emulated-clusters-on-few-cores"),
    Target("profiler-overhead.md", "profiler-overhead.json", "≤ 50 ns added per call",
           lambda d: _at_most(50, [r["added ns"] for r in rows(d, "null call")], " ns")),
    Target("profiler-overhead.md", "profiler-overhead.json", "LAMMPS profiled / plain ≤ 1.02 in every trial",
           lambda d: _at_most(1.02, [r["per-trial ratio max"] for r in rows(d, "LAMMPS")], " ×"),
           "more-ranks-than-cores"),
    Target("trace-overhead.md", "trace-overhead.json", "traced / untraced within noise: about half the cases slower",
           _trace),
    Target("tuner.md", "tuner.json", "≥ 1.2 × geometric mean where a rule applies", _tuner_summary),
    Target("tuner.md", "tuner.json", "no cell slower beyond noise, the file in effect", _tuner_safe),
    Target("tuner.md", "tuner.json", "the search measures ≤ 25% of the grid", _tuner("measured %", 25, True),
           "the-tuners-search-on-a-short-grid"),
    Target("tuner.md", "tuner.json", "≥ 95% of decisions as the exhaustive tune's",
           _tuner("same code or tied %", 95, False)),
    Target("tuner.md", "tune-search-replay.json", "the guided search measures ≤ 25% of the grid (replayed)",
           _replayed("measured %", lambda v: v <= 25), "the-guided-search-on-the-stored-tunes"),
    Target("tuner.md", "tune-search-replay.json", "≥ 95% of the guided search's decisions as the exhaustive's",
           _replayed("decisions running the same code %", lambda v: v >= 95)),
    Target("tuner.md", "tune-search-replay.json", "the guided tune's geometric mean within 2% of the exhaustive's",
           _replayed("geomean vs exhaustive %", lambda v: abs(v) <= 2)),
    Target("transport-lab.md", "transport-lab.json", "CMA ≥ 0.9 × memcpy at ≥ 1 MiB", _cma,
           "cross-memory-attach-against-memcpy"),
    Target("transport-lab.md", "transport-lab.json", "basic design's 8 B latency ≤ Open MPI vader's",
           lambda d: _at_most(1, [r["basic / vader"] for r in rows(d, "8-byte latency")], " ×")),
    Target("transport-lab.md", "transport-lab.json", "the hybrid within 3% of the best design at every size",
           _hybrid, "the-hybrid-within-3"),
    Target("app-loop.md", "app-loop.json", "no application slower beyond noise", _app_not_slower),
    Target("app-loop.md", "app-loop.json",
           "≥ 1.1 and inside the prediction where tuned cells carry ≥ 20% at ≥ 1.5 ×", _app_strong),
    Target("history.md", "history.json", "≥ 95% of 5% steps flagged within 3 runs",
           _history_detected("0.05", 0.95), "steps-near-the-runs-own-intervals"),
    Target("history.md", "history.json", "every 10% step flagged within 3 runs",
           _history_detected("0.1", 1.0), "steps-near-the-runs-own-intervals"),
    Target("history.md", "history.json", "≤ 1 false flag per 100 unchanged runs", _history_false,
           "steps-near-the-runs-own-intervals"),
    Target("history.md", "history.json", "a real change flagged at its first run, the setting named, "
           "nothing before", _history_regression),
    Target("history.md", "history-speed.json", "history over 10,000 runs in ≤ 2 s",
           lambda d: (f"{d['results']['warm_median_s']:.2f} s", d["results"]["warm_median_s"] <= 2.0)),
]


def verdicts(directory: Path = VALIDATION) -> list[Verdict]:
    """Every target decided from its JSON file in `directory`."""
    docs, out = {}, []
    for t in TARGETS:
        if t.data not in docs:
            docs[t.data] = json.loads((directory / t.data).read_text())
        measured, met = t.measure(docs[t.data])
        out.append(Verdict(t, measured, bool(met)))
    return out


def limitation_anchors(text: str) -> set[str]:
    """The anchors of a Markdown page's second-level headings, as MkDocs's
    toc extension makes them."""
    return {re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", h.strip().lower())).strip("-")
            for h in re.findall(r"^## (.+)$", text, flags=re.M)}
