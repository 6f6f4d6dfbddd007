# SPDX-License-Identifier: BSD-3-Clause
"""How far each series' numbers can be trusted: a verdict per series (bench ×
algo × size, launches pooled) with its valid and invalid samples, the
engine's stop reasons, the interval's relative half-width, the start scheme
and the flags (few_samples, heavy_invalid, ci_not_reached, non_monotone,
bimodal, start), stored with the run (quality.json). `warnings()` makes one
line per flag for `run`, `show` and the report's banner. Flags and their
thresholds: docs/explanation/statistics.md, "Quality verdicts"."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from mpiscope.common.atomic import write_text
from mpiscope.common.jsonable import plain
from mpiscope.common.sizes import format_size
from mpiscope.stats.modes import mode_weights_sorted
from mpiscope.stats.summary import sorted_clean, summarize_sorted
from mpiscope.store.history_fields import QUALITY_FORMAT, QUALITY_SCHEMA_VERSION
from mpiscope.store.layout import QUALITY_FILE
from mpiscope.store.run import Run
from mpiscope.store.series import bench_label, map_series

# The fewest valid samples whose order statistics give the median a 95% CI:
# P(x_(1) <= median <= x_(6)) = 1 - 2 * 2^-6 = 96.9%; with 5 it is 93.8%.
MIN_SAMPLES = 6
# Beyond a quarter, the valid samples are those that happened to start on
# time: a selection, which can move the median.
HEAVY_INVALID = 0.25
# Neighbouring sizes differ by a few percent through alignment and copy
# paths; a smaller message slower by more than this is worth a look.
NON_MONOTONE_MARGIN = 0.05
# A minor mode lighter than this is a tail, not a second state.
BIMODAL_MIN_WEIGHT = 0.10

FLAGS = ("few_samples", "heavy_invalid", "ci_not_reached", "non_monotone", "bimodal", "start")
FORMAT = QUALITY_FORMAT
SCHEMA_VERSION = QUALITY_SCHEMA_VERSION
MAX_EXAMPLES = 3


@dataclass(frozen=True)
class Verdict:
    """The quality of one series; `details` says per flag what was seen."""

    bench: str
    algo: str
    size: int
    unit: str
    n: int
    invalid: int
    stop: str  # the launches' stop reasons, comma-joined ("" unrecorded)
    ci_reached: bool | None  # None: not known (nothing recorded, or skipped)
    ci_halfwidth: float  # of the pooled median's CI, relative to it (NaN: no CI)
    start: str | None = None  # how repetitions started, when the engine records it
    flags: tuple = ()
    details: dict = field(default_factory=dict)
    median: float = math.nan  # the pooled median and its 95% CI (NaN: not stored, or no samples)
    ci_low: float = math.nan
    ci_high: float = math.nan
    # summarize() of the samples the verdict was made from, for show's row of
    # the series (not stored: a verdict read back has None).
    summary: dict | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> tuple:
        return (self.bench, self.algo, self.size)

    @property
    def invalid_share(self) -> float:
        total = self.n + self.invalid
        return self.invalid / total if total else 0.0

    @property
    def skipped(self) -> bool:
        return "skipped" in self.stop.split(",")

    def label(self) -> str:
        return f"{bench_label(self.bench, self.algo)} {format_size(self.size)} B"

    def to_dict(self) -> dict:
        return {
            "bench": self.bench,
            "algo": self.algo,
            "size": self.size,
            "unit": self.unit,
            "n": self.n,
            "invalid": self.invalid,
            "invalid_share": self.invalid_share,
            "stop": self.stop,
            "ci_reached": self.ci_reached,
            "ci_halfwidth": self.ci_halfwidth,
            "start": self.start,
            "flags": list(self.flags),
            "details": dict(self.details),
            "median": self.median,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
        }

    @classmethod
    def from_dict(cls, d: dict) -> Verdict:
        half = d.get("ci_halfwidth")
        return cls(
            d["bench"],
            d.get("algo", "mpi"),
            int(d["size"]),
            d.get("unit", "s"),
            int(d["n"]),
            int(d.get("invalid", 0)),
            d.get("stop") or "",
            d.get("ci_reached"),
            math.nan if half is None else float(half),
            d.get("start"),
            tuple(d.get("flags") or ()),
            dict(d.get("details") or {}),
            median=_number(d.get("median")),
            ci_low=_number(d.get("ci_low")),
            ci_high=_number(d.get("ci_high")),
        )


def _number(value) -> float:
    return math.nan if value is None else float(value)


# ---------------------------------------------------------------- one series


def _ci_reached(stops, halfwidth, ci_width):
    """The engine's word when it recorded stop reasons; else the pooled CI
    against the run's --ci-width; else unknown."""
    if ci_width == 0:  # --ci-width 0: no target to reach
        return None
    known = [s for s in stops if s and s != "none"]
    if known:
        return None if "skipped" in known else all(s == "ci" for s in known)
    if ci_width is not None and math.isfinite(halfwidth):
        return bool(halfwidth <= ci_width)
    return None


def _halfwidth(st) -> float:
    if st["n"] < MIN_SAMPLES or not st["median"] > 0:
        return math.nan
    return 0.5 * (st["ci_high"] - st["ci_low"]) / st["median"]


def _modes_over(a):
    """Weights of the modes of at least BIMODAL_MIN_WEIGHT, of sorted values
    without NaNs (an infinity, if any, is at an end)."""
    if len(a) < MIN_SAMPLES:
        return []
    finite = a if np.isfinite(a[0]) and np.isfinite(a[-1]) else a[np.isfinite(a)]
    return [w for w in mode_weights_sorted(finite) if w >= BIMODAL_MIN_WEIGHT]


def series_verdict(bench, algo, size, samples, records, sync_method=None, ci_width=None):
    """The verdict of one series without the neighbour check (run_verdicts
    adds it), and its summary. `records`: its SeriesRecords, one per launch.
    The values are sorted once, for the summary and the modes alike."""
    a = sorted_clean(samples.values)
    st = summarize_sorted(a)
    stops = list(dict.fromkeys(str(r.stop) for r in records if r.stop))
    starts = list(dict.fromkeys(str(r.start) for r in records if r.start))
    half = _halfwidth(st)
    v = Verdict(
        bench,
        algo,
        int(size),
        samples.unit,
        st["n"],
        int(samples.n_invalid),
        ",".join(stops),
        _ci_reached(stops, half, ci_width),
        half,
        ",".join(starts) or None,
        median=st["median"],
        ci_low=st["ci_low"],
        ci_high=st["ci_high"],
        summary=st,
    )
    if v.skipped:
        return v, st
    flags, details = [], {}
    if v.n < MIN_SAMPLES:
        flags.append("few_samples")
        details["few_samples"] = f"{v.n} valid samples"
    if v.invalid_share > HEAVY_INVALID:
        flags.append("heavy_invalid")
        details["heavy_invalid"] = f"{v.invalid} of {v.n + v.invalid} invalid"
    if v.ci_reached is False:
        flags.append("ci_not_reached")
        details["ci_not_reached"] = f"stopped by {v.stop}"
    weights = _modes_over(a)
    if len(weights) > 1:
        flags.append("bimodal")
        details["bimodal"] = "modes of " + ", ".join(f"{100 * w:.0f}%" for w in weights)
    # --sync auto chooses window or barrier starts per series; a fallback is still foreign
    expected = {"window", "barrier"} if sync_method == "auto" else {sync_method}
    foreign = [s for s in starts if s not in expected]
    if sync_method and foreign:
        flags.append("start")
        details["start"] = f"start {', '.join(foreign)} in a --sync {sync_method} run"
    return replace(v, flags=tuple(flags), details=details), st


def _non_monotone(verdicts, summaries):
    """Flags a latency above the next larger size's beyond both CIs (same curve)."""
    curves = {}
    for i, v in enumerate(verdicts):
        if v.unit == "s" and summaries[i]["n"] > 0:
            curves.setdefault((v.bench, v.algo), []).append(i)
    out = list(verdicts)
    for idx in curves.values():
        idx.sort(key=lambda i: verdicts[i].size)
        for i, j in zip(idx, idx[1:]):
            a, b = summaries[i], summaries[j]
            if a["ci_low"] > b["ci_high"] and a["median"] > b["median"] * (1.0 + NON_MONOTONE_MARGIN):
                v = out[i]
                details = dict(
                    v.details,
                    non_monotone=(
                        f"median {a['median'] * 1e6:.3g} us above {b['median'] * 1e6:.3g} us at "
                        f"{format_size(verdicts[j].size)} B"
                    ),
                )
                out[i] = replace(v, flags=_ordered(v.flags + ("non_monotone",)), details=details)
    return out


def _ordered(flags):
    return tuple(f for f in FLAGS if f in flags)


def run_verdicts(series, run: Run) -> list[Verdict]:
    """Verdicts of [(bench, algo, size, Samples)] (series.all_series_samples), in its order."""
    sync = run.sync_method
    ci_width = (run.plan or {}).get("ci_width")
    records = {}  # run.entries of every series, found in one pass
    for record in run.series:
        records.setdefault((record.bench, record.size, record.algo), []).append(record)

    def one(item):
        bench, algo, size, s = item
        return series_verdict(bench, algo, size, s, records.get((bench, int(size), algo), []), sync, ci_width)

    made = map_series(one, series, sum(len(s) for *_, s in series))
    return _non_monotone([v for v, _ in made], [st for _, st in made])


# ---------------------------------------------------------------- stored with the run


def save(run_dir, verdicts) -> Path:
    """Writes the verdicts to RUN/quality.json (atomically)."""
    doc = {
        "format": FORMAT,
        "schema_version": SCHEMA_VERSION,
        "thresholds": thresholds(),
        "series": [v.to_dict() for v in verdicts],
    }
    path = Path(run_dir) / QUALITY_FILE
    write_text(path, json.dumps(plain(doc), indent=1) + "\n")
    return path


def load_stored(run_dir) -> list[Verdict] | None:
    """The stored verdicts; None when there are none this version reads."""
    from mpiscope.common.inputs import InputError, read_json

    try:
        doc = read_json(Path(run_dir) / QUALITY_FILE)
        if doc.get("format") != FORMAT or doc.get("schema_version") != SCHEMA_VERSION:
            return None
        return [Verdict.from_dict(d) for d in doc["series"]]
    except (InputError, AttributeError, ValueError, KeyError, TypeError):
        return None  # absent (a run stored without verdicts) or damaged: computed again


def verdicts_of(run_dir, series, run: Run) -> list[Verdict]:
    """The stored verdicts when they cover exactly these series, else computed
    now (runs stored without verdicts); in the order of `series`."""
    stored = load_stored(run_dir) if run_dir is not None else None
    keys = [(b, a, int(s)) for b, a, s, _ in series]
    if stored is not None:
        by_key = {v.key: v for v in stored}
        if set(by_key) == set(keys) and len(stored) == len(keys):
            return [by_key[k] for k in keys]
    return run_verdicts(series, run)


def thresholds() -> dict:
    return {
        "min_samples": MIN_SAMPLES,
        "heavy_invalid": HEAVY_INVALID,
        "non_monotone_margin": NON_MONOTONE_MARGIN,
        "bimodal_min_weight": BIMODAL_MIN_WEIGHT,
    }


# ---------------------------------------------------------------- what to tell the user


def _fix(kind, flagged, run: Run) -> tuple[str, str]:
    """(what was seen, what to do) for one kind of flag."""
    plan = (run.plan or {}) if run is not None else {}
    if kind == "few_samples":
        return (
            f"fewer than {MIN_SAMPLES} valid samples (the median has no 95% CI)",
            f"raise --reps-min (was {plan.get('reps_min', 10)}) or --time-budget",
        )
    if kind == "heavy_invalid":
        return (
            f"more than {HEAVY_INVALID:.0%} of samples invalid (late starts)",
            "rerun with --sync barrier, or on less loaded nodes",
        )
    if kind == "ci_not_reached":
        by = {}
        for v in flagged:
            for s in v.stop.split(","):
                if s not in ("ci", ""):
                    by[s] = by.get(s, 0) + 1
        width = plan.get("ci_width")
        target = f"the ±{width:.0%} target" if isinstance(width, (int, float)) else "its target"
        fixes = []
        if "time_budget" in by:
            fixes.append(f"raise --time-budget (was {plan.get('time_budget', 1)} s)")
        if "reps_max" in by:
            fixes.append(f"raise --reps-max (was {plan.get('reps_max', 100000)})")
        stops = ", ".join(f"{k} {n}" for k, n in sorted(by.items()))
        return (
            f"the CI of the median did not reach {target} (stopped by: {stops})",
            " or ".join(fixes + ["accept a wider --ci-width"]),
        )
    if kind == "non_monotone":
        return (
            f"slower than the next larger size by more than {NON_MONOTONE_MARGIN:.0%}, beyond both CIs",
            "rerun with --launches 3: a protocol or algorithm switch repeats in every launch, a disturbance does not",
        )
    if kind == "bimodal":
        return (
            f"two or more modes of at least {BIMODAL_MIN_WEIGHT:.0%} each",
            "rerun with --launches 3 to see whether the modes follow the launch (placement), or "
            "with fewer ranks than CPUs, where ranks are pinned to cores",
        )
    if all("window,barrier" in v.start for v in flagged):  # a fallback in some launch
        return (
            "window starts fell back to barrier starts (too many started late: ranks kept losing their CPU)",
            "rerun on less loaded nodes, or with --sync barrier for one start scheme throughout",
        )
    sync = (run.sync_method if run is not None else None) or "window"
    return (
        f"repetitions did not all start as --sync {sync} says ({flagged[0].start})",
        "rerun with --sync barrier for one start scheme throughout",
    )


def warnings(verdicts, run: Run | None = None) -> list[str]:
    """One line per kind of flag: how many series, a few of them, what to do."""
    total = len(verdicts)
    out = []
    for kind in FLAGS:
        flagged = [v for v in verdicts if kind in v.flags]
        if not flagged:
            continue
        seen, todo = _fix(kind, flagged, run)
        names = ", ".join(v.label() for v in flagged[:MAX_EXAMPLES])
        more = f" and {len(flagged) - MAX_EXAMPLES} more" if len(flagged) > MAX_EXAMPLES else ""
        out.append(f"{len(flagged)} of {total} series: {seen} ({names}{more}) — {todo}")
    return out


def clean(verdicts) -> int:
    """Series without a flag (skipped ones not counted as measured)."""
    return sum(1 for v in verdicts if not v.flags and not v.skipped)


def headline(verdicts) -> str:
    """One line for a banner: how many series pass every check."""
    measured = [v for v in verdicts if not v.skipped]
    skipped = len(verdicts) - len(measured)
    text = f"{clean(verdicts)} of {len(measured)} series pass every check"
    return text + (f" ({skipped} skipped)" if skipped else "")
