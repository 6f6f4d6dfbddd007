# SPDX-License-Identifier: BSD-3-Clause
"""LogGP parameters of a run, measured as Bell et al. (2003) do: EEL from
`oneway`, o_s and o_r from the CPU overlap test (`overhead`: past the knee,
time per message − Δ; the knee's two steps bound it), g and G from the
`flood` (G in its last piecewise segment), g/G, and L = EEL − o_s − o_r,
defined only when positive (otherwise the overheads overlap and the run is
flagged). Each is an Estimate (samples resampled within each series) with the
fewest valid samples it comes from. Method: docs/explanation/loggp.md.
Pure computation: the text and JSON forms are in views/loggp.py."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mpiscope.models.curves import build_curve
from mpiscope.common.errors import UsageError
from mpiscope.stats.estimate import Estimate
from mpiscope.stats.medians import bootstrap_medians, percentile_interval, replicate_stderr
from mpiscope.models.piecewise import piecewise, wls_lines
from mpiscope.stats.quality import MIN_SAMPLES
from mpiscope.store.ingest import load
from mpiscope.store.run import Run
from mpiscope.store.series import all_series_samples

DEFAULT_SEED = 1
DEFAULT_BOOT = 1000
CI_METHOD = "bootstrap percentile (samples resampled within each series)"
BASE_SIZE = 8  # Bell et al.'s minimum-size message
KNEE_TOLERANCE = 0.02  # a step lengthens the time when its median exceeds g0 by more (or its CI)
LOGGP_BENCHES = ("oneway", "flood", "overhead", "rma_lat", "rma_flood")
MEASURED = ("EEL", "o_s", "o_r", "g", "G")  # the others are derived from these


# ---------------------------------------------------------------- medians with replicates


@dataclass(frozen=True)
class Med:
    """The median of a series' samples and its bootstrap replicates."""

    n: int
    point: float
    boot: np.ndarray

    def estimate(self, level: float) -> Estimate:
        return estimate_of(self.point, self.boot, level)


def med(values, rng: np.random.Generator, n_boot: int) -> Med | None:
    v = np.asarray(values, dtype=np.float64)
    v = v[np.isfinite(v)]
    if len(v) == 0:
        return None
    return Med(len(v), float(np.median(v)), bootstrap_medians(v, n_boot, rng))


def estimate_of(point, boot, level) -> Estimate:
    lo, hi = percentile_interval(boot, level)
    return Estimate(float(point), replicate_stderr(boot), level, lo, hi, CI_METHOD)


# ---------------------------------------------------------------- results


@dataclass
class OverheadLevel:
    """One computation step of the overlap test at one size."""

    step: float  # Δ in multiples of g0
    compute_s: float  # Δ (mean over launches)
    per_msg: Estimate  # time per message
    overhead: Estimate  # time per message − Δ
    past_knee: bool  # Δ ≥ g0: certainly beyond the knee
    lengthened: bool  # the time per message grew against step 0


@dataclass
class Overhead:
    """o_s or o_r at one size."""

    side: str  # "send" or "receive"
    size: int
    g0: Estimate | None  # time per message without computation (step 0)
    value: Estimate | None
    levels: list = field(default_factory=list)
    knee: tuple | None = None  # (lower, upper) bound of o from the knee, seconds
    fake_overhead_s: float | None = None
    note: str = ""
    boot: np.ndarray | None = field(default=None, repr=False)  # replicates of value
    n: int = 0  # fewest valid samples of the steps' series

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "boot"}


@dataclass
class LogGPResult:
    run_id: str
    run: Run
    seed: int
    n_boot: int
    level: float
    base_size: int | None
    params: dict  # name -> Estimate or None
    sources: dict  # name -> how it was obtained
    eel: dict  # size -> Estimate
    overheads: dict  # "send"/"receive" -> [Overhead] by size
    gaps: dict  # size -> {q: Estimate}
    best_q: dict  # size -> q of the least gap
    one_sided: dict  # mode -> {"latency": {size: Est}, "gap": {size: Est}, "G": Est|None}
    flags: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    samples: dict = field(default_factory=dict)  # name -> fewest valid samples behind it

    def insufficient(self) -> dict:
        """{name: samples} of the measured parameters resting on fewer than MIN_SAMPLES."""
        return {name: n for name, n in self.samples.items() if name in MEASURED and n is not None and n < MIN_SAMPLES}

    def to_dict(self) -> dict:
        def by_size(d):
            return [
                {"size": int(s), **({"estimate": e} if not isinstance(e, dict) else e)} for s, e in sorted(d.items())
            ]

        return {
            "run_id": self.run_id,
            "seed": self.seed,
            "n_boot": self.n_boot,
            "level": self.level,
            "units": {"time": "s", "G": "s/B", "g_over_G": "B", "size": "B"},
            "base_size": self.base_size,
            "params": self.params,
            "sources": self.sources,
            "samples": self.samples,
            "min_samples": MIN_SAMPLES,
            "eel": by_size(self.eel),
            "overheads": {side: [o.to_dict() for o in rows] for side, rows in self.overheads.items()},
            "gaps": [
                {
                    "size": int(s),
                    "best_q": self.best_q.get(s),
                    "by_queue_depth": {f"q{q}": e for q, e in sorted(qs.items())},
                }
                for s, qs in sorted(self.gaps.items())
            ],
            "one_sided": {
                mode: {"latency": by_size(v["latency"]), "gap": by_size(v["gap"]), "G": v["G"]}
                for mode, v in self.one_sided.items()
            },
            "flags": self.flags,
            "notes": self.notes,
        }


# ---------------------------------------------------------------- computation


def _params_of(run: Run) -> dict:
    """(bench, algo, size) -> [params of each launch]."""
    out = {}
    for s in run.series:
        out.setdefault((s.bench, s.algo, s.size), []).append((s.launch, s.params or {}))
    return out


def _queue_depth(algo) -> int | None:
    if isinstance(algo, str) and algo.startswith("q") and algo[1:].isdigit():
        return int(algo[1:])
    return None


def _side_step(algo):
    """ "os+1.5g" -> ("send", 1.5); None for other names."""
    if not isinstance(algo, str) or len(algo) < 5 or algo[:3] not in ("os+", "or+") or not algo.endswith("g"):
        return None
    try:
        return ("send" if algo[:2] == "os" else "receive"), float(algo[3:-1])
    except ValueError:
        return None


def _base_size(sizes) -> int | None:
    sizes = sorted(s for s in sizes if s > 0)
    if not sizes:
        return None
    return BASE_SIZE if BASE_SIZE in sizes else sizes[0]


def _deltas(compute, samples):
    """Δ of every sample, from its launch's series (NaN when not recorded)."""
    return np.array([compute.get(int(k), np.nan) for k in np.asarray(samples.launch).tolist()], dtype=np.float64)


def _safe_div(a, b):
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(b > 0, a / np.where(b > 0, b, 1.0), np.nan)
    return float(out) if out.ndim == 0 else out


def _overhead_at(side, size, levels, rng, n_boot, level) -> Overhead:
    """levels: [(step, {launch: compute_s}, fake_s, Samples)] of one side × size."""
    levels = sorted(levels, key=lambda x: x[0])
    zero = [x for x in levels if x[0] == 0]
    fake = next((x[2] for x in levels if x[2]), None)
    if not zero:
        return Overhead(
            side,
            size,
            None,
            None,
            fake_overhead_s=fake,
            note="no step without computation (0 in --overhead-steps) to compare with",
        )
    g0 = med(zero[0][3].values, rng, n_boot)
    if g0 is None:
        return Overhead(side, size, None, None, fake_overhead_s=fake, note="no valid samples at step 0")
    g0_half = 0.5 * (percentile_interval(g0.boot, level)[1] - percentile_interval(g0.boot, level)[0])
    threshold = g0.point + max(KNEE_TOLERANCE * g0.point, g0_half)
    rows, past, used_n = [], [], [g0.n]
    for step, compute, _, s in levels:
        delta = _deltas(compute, s)
        m = med(s.values, rng, n_boot)
        o = med(np.asarray(s.values) - delta, rng, n_boot)
        if m is None or o is None:
            continue
        mean_delta = float(np.nanmean(list(compute.values()))) if compute else math.nan
        is_past = step > 0 and mean_delta >= g0.point
        rows.append(OverheadLevel(step, mean_delta, m.estimate(level), o.estimate(level), is_past, m.point > threshold))
        used_n.append(m.n)
        if is_past:
            past.append(o)
    result = Overhead(side, size, g0.estimate(level), None, rows, fake_overhead_s=fake, n=min(used_n))
    if past:
        point = float(np.median([o.point for o in past]))
        boot = np.median(np.vstack([o.boot for o in past]), axis=0)
        result.value = estimate_of(point, boot, level)
        result.boot = boot
    elif rows:
        last = rows[-1]
        result.value = last.overhead
        m = med(np.asarray(levels[-1][3].values) - _deltas(levels[-1][1], levels[-1][3]), rng, n_boot)
        result.boot = m.boot if m else None
        result.note = (
            f"no step reached a computation of g0 = {g0.point * 1e6:.3g} us; the value at "
            f"the largest step is an upper bound: add larger --overhead-steps"
        )
    # The knee as Bell et al. read it: o lies between g0 − Δb and g0 − Δa.
    quiet = [r.compute_s for r in rows if not r.lengthened]
    grown = [r.compute_s for r in rows if r.lengthened]
    if quiet and grown:
        a = max(quiet)
        b = min([d for d in grown if d > a] or [max(grown)])
        result.knee = (max(0.0, g0.point - b), max(0.0, g0.point - a))
    return result


def _gap_curve_G(gaps_values, best_q, rng, n_boot, level, min_points=3):
    """G from the flood's time per message at the best queue depth per size:
    the slope of the last piecewise segment, with replicates."""
    by_size = {size: gaps_values[size][best_q[size]] for size in best_q}
    curve = build_curve("flood", "best-q", by_size, rng, n_boot, level)
    if len(curve) < 2:
        return None, None, "G needs the flood at two sizes or more", None
    pw = piecewise(curve, level, min_points)
    last = pw.segments[-1]
    x = curve.sizes.astype(np.float64)
    inside = (curve.sizes >= last.first_size) & (curve.sizes <= last.last_size)
    _, boot_beta = wls_lines(x[inside], curve.boot[:, inside], curve.scales[inside])
    est = estimate_of(last.beta.point, boot_beta, level)
    how = (
        f"flood, least gap per size, slope of the last piecewise segment "
        f"({last.first_size}-{last.last_size} B, {last.n_sizes} sizes)"
    )
    return est, boot_beta, how, int(curve.counts.min())


def _eel_medians(by, rng, n_boot) -> dict:
    """EEL(m): {size: bootstrapped median of oneway}."""
    eel_med = {}
    for algo, size, s in by.get("oneway", []):
        m = med(s.values, rng, n_boot)
        if m is not None:
            eel_med[size] = m
    return eel_med


def _overheads(by, params, rng, n_boot, level) -> dict:
    """o_s(m), o_r(m): {"send": [Overhead by size], "receive": [...]}."""
    levels = {}
    for algo, size, s in by.get("overhead", []):
        ss = _side_step(algo)
        if ss is None:
            continue
        entries = params.get(("overhead", algo, size), [])
        compute = {launch: p.get("compute_s") for launch, p in entries if p.get("compute_s") is not None}
        fake = next((p.get("fake_overhead_s") for _, p in entries if p.get("fake_overhead_s")), None)
        levels.setdefault((ss[0], size), []).append((ss[1], compute, fake, s))
    overheads = {"send": [], "receive": []}
    for side, size in sorted(levels, key=lambda k: (k[0] != "send", k[1])):
        overheads[side].append(_overhead_at(side, size, levels[(side, size)], rng, n_boot, level))
    return overheads


def _flood_gaps(by, rng, n_boot, level):
    """g(m, q): (values, estimates, medians), each {size: {q: …}}, and the best q per size."""
    gap_values, gaps, gap_meds = {}, {}, {}
    for algo, size, s in by.get("flood", []):
        q = _queue_depth(algo)
        m = med(s.values, rng, n_boot) if q is not None else None
        if m is None:
            continue
        gap_values.setdefault(size, {})[q] = s.values
        gap_meds.setdefault(size, {})[q] = m
        gaps.setdefault(size, {})[q] = m.estimate(level)
    best_q = {size: min(qs, key=lambda q: (qs[q].point, q)) for size, qs in gap_meds.items()}
    return gap_values, gaps, gap_meds, best_q


class _Params:
    """The parameters as they are found: estimate, bootstrap replicates and how."""

    def __init__(self, level):
        self.level, self.values, self.sources, self.boots, self.samples = level, {}, {}, {}, {}

    def put(self, name, est, boot, how, n=None):
        """`n`: the fewest valid samples of the series behind it (None: not measured)."""
        self.values[name], self.boots[name], self.sources[name] = est, boot, how
        self.samples[name] = n if est is not None else None

    def combo(self, names, fn):
        """fn of other parameters, replicate by replicate; None if one is missing."""
        if any(self.boots.get(n) is None for n in names):
            return None
        point = fn(*(self.values[n].point for n in names))
        with np.errstate(divide="ignore", invalid="ignore"):
            boot = fn(*(self.boots[n] for n in names))
        return estimate_of(point, boot, self.level), boot

    def put_combo(self, name, names, fn, how):
        c = self.combo(names, fn)
        n = min((self.samples[x] for x in names), default=None) if c else None
        self.put(name, c[0] if c else None, c[1] if c else None, how, n)
        return c


def _measured_at_base(p, base, eel_med, overheads, gap_meds, best_q, notes):
    """EEL, o_s, o_r and g at the base size."""
    level = p.level
    if base in eel_med:
        p.put("EEL", eel_med[base].estimate(level), eel_med[base].boot, f"oneway, {base} B, median", eel_med[base].n)
    else:
        p.put("EEL", None, None, f"not measured: add oneway at {base} B" if base else "not measured")
    for side, name in (("send", "o_s"), ("receive", "o_r")):
        row = next((o for o in overheads[side] if o.size == base), None)
        if row is not None and row.value is not None:
            used = ", ".join(f"{lv.step:g}" for lv in row.levels if lv.past_knee) or "largest"
            p.put(
                name,
                row.value,
                row.boot,
                f"overhead {'os' if side == 'send' else 'or'}, {base} B, steps past the knee ({used} x g0)",
                row.n,
            )
            if row.note:
                notes.append(f"{name}: {row.note}")
        else:
            p.put(name, None, None, f"not measured: add overhead at {base} B")
    if base in gap_meds:
        q = best_q[base]
        p.put(
            "g",
            gap_meds[base][q].estimate(level),
            gap_meds[base][q].boot,
            f"flood q{q} (least of {len(gap_meds[base])} queue depths), {base} B",
            gap_meds[base][q].n,
        )
    else:
        p.put("g", None, None, f"not measured: add flood at {base} B")


def _derived(p, flags):
    """g/G, bandwidth, the overlap EEL − o_s − o_r and L, replicate by replicate."""
    p.put_combo("g_over_G", ("g", "G"), _safe_div, "g / G: messages larger than this are bandwidth-bound")
    p.put_combo("bandwidth", ("G",), lambda G: _safe_div(1.0, G), "1 / G (bytes per second)")
    ov = p.put_combo(
        "overlap", ("EEL", "o_s", "o_r"), lambda e, s, r: e - s - r, "EEL - (o_s + o_r): computation a message can hide"
    )
    if not ov:
        p.put("L", None, None, "needs EEL, o_s and o_r")
        return
    est = ov[0]
    if est.point >= 0:
        p.put("L", est, ov[1], "EEL - o_s - o_r (LogP's serial model)", p.samples["overlap"])
        return
    p.put("L", None, None, "undefined: o_s + o_r > EEL")
    sure = "" if est.high < 0 else " (within the CI of EEL)"
    flags.append(
        f"overlapping overheads: o_s + o_r exceeds EEL by {-est.point * 1e6:.3g} us"
        f"{sure}; LogP's serial model EEL = o_s + L + o_r does not hold, L is undefined"
    )


def _overlap_elsewhere(overheads, eel_med, base):
    """The same question at the other sizes (o(m) against EEL(m)): a flag, or None."""
    send = {o.size: o.value for o in overheads["send"] if o.value is not None}
    recv = {o.size: o.value for o in overheads["receive"] if o.value is not None}
    over = [
        (size, send[size].point + recv[size].point - eel_med[size].point)
        for size in sorted(set(send) & set(recv) & set(eel_med))
        if size != base
    ]
    over = [(size, d) for size, d in over if d > 0]
    if not over:
        return None
    where = ", ".join(f"{size} B (by {d * 1e6:.3g} us)" for size, d in over)
    return f"o_s + o_r exceeds EEL at {where}: the overheads overlap there"


def loggp_series(series, run: Run, seed=DEFAULT_SEED, n_boot=DEFAULT_BOOT, level=0.95) -> LogGPResult:
    """LogGP from [(bench, algo, size, Samples)] (series.all_series_samples) and its run.
    Bootstrap draws come from one generator in a fixed order: EEL, overheads, gaps, G,
    one-sided."""
    rng = np.random.default_rng(seed)
    flags, notes = [], []
    by = {}
    for bench, algo, size, s in series:
        by.setdefault(bench, []).append((algo, int(size), s))
    if not any(b in by for b in LOGGP_BENCHES):
        raise UsageError(
            f"run {run.run_id} has none of the LogGP benchmarks "
            f"({', '.join(LOGGP_BENCHES)}): measure them with e.g. `mpiscope run -n 2 "
            f"--suite loggp`"
        )
    eel_med = _eel_medians(by, rng, n_boot)
    overheads = _overheads(by, _params_of(run), rng, n_boot, level)
    if any(o.fake_overhead_s for rows in overheads.values() for o in rows):
        flags.append(
            "test run: MPISCOPE_TEST_FAKE_OVERHEAD_US replaced the operation under test by a "
            "fixed spin; these overheads are not MPI's"
        )
    gap_values, gaps, gap_meds, best_q = _flood_gaps(by, rng, n_boot, level)

    base = _base_size(list(eel_med) + list(gap_meds) + [o.size for r in overheads.values() for o in r])
    p = _Params(level)
    _measured_at_base(p, base, eel_med, overheads, gap_meds, best_q, notes)
    G, G_boot, how, G_n = (
        (None, None, "not measured: add flood", None)
        if not gap_meds
        else _gap_curve_G(gap_values, best_q, rng, n_boot, level)
    )
    p.put("G", G, G_boot, how, G_n)
    if G is not None and G.point <= 0:
        notes.append("G is not positive: the largest sizes do not cost more per message; measure larger sizes")
    _derived(p, flags)
    elsewhere = _overlap_elsewhere(overheads, eel_med, base)
    if elsewhere:
        flags.append(elsewhere)

    one_sided = _one_sided(by, rng, n_boot, level)
    for name in MEASURED:
        if p.values.get(name) is None:
            notes.append(f"{name}: {p.sources[name]}")
    result = LogGPResult(
        run.run_id,
        run,
        seed,
        n_boot,
        level,
        base,
        p.values,
        p.sources,
        {s: m.estimate(level) for s, m in sorted(eel_med.items())},
        overheads,
        gaps,
        best_q,
        one_sided,
        flags,
        notes,
        p.samples,
    )
    for name, n in result.insufficient().items():
        flags.append(
            f"insufficient data: {name} rests on series of as few as {n} valid sample"
            f"{'s' if n != 1 else ''} ({p.sources[name]}); fewer than {MIN_SAMPLES} give its "
            "median no 95% CI"
        )
    return result


def _one_sided(by, rng, n_boot, level) -> dict:
    out = {}
    for bench, key in (("rma_lat", "latency"), ("rma_flood", "gap")):
        for algo, size, s in by.get(bench, []):
            m = med(s.values, rng, n_boot)
            if m is None:
                continue
            entry = out.setdefault(algo, {"latency": {}, "gap": {}, "G": None, "_values": {}})
            entry[key][size] = m.estimate(level)
            if key == "gap":
                entry["_values"][size] = s.values
    for mode, entry in out.items():
        values = entry.pop("_values")
        if len(values) >= 2:
            curve = build_curve("rma_flood", mode, values, rng, n_boot, level)
            if len(curve) >= 2:
                entry["G"] = piecewise(curve, level).segments[-1].beta
    return out


def loggp_run(run_dir, seed=DEFAULT_SEED, n_boot=DEFAULT_BOOT, level=0.95) -> LogGPResult:
    table, run = load(Path(run_dir))
    return loggp_series(all_series_samples(table, run), run, seed, n_boot, level)
