# SPDX-License-Identifier: BSD-3-Clause
"""Compare two runs, benchmark × algorithm × size by benchmark × algorithm ×
size (only those are matched, so runs of different libraries or hosts
compare): per key the ratio of medians B / A with a bootstrap interval, the
two-sided Mann–Whitney U test, and a verdict, "faster" or "slower" needing
both p < alpha and the whole interval outside 1 ± noise ("insufficient" below
min_samples(alpha)); the summary is the geometric mean of the judged time
ratios. Method: docs/explanation/statistics.md, "Comparing two runs".
Pure computation; the table is formatted by views/compare.py."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mpiscope.common.errors import UsageError
from mpiscope.stats.estimate import Estimate
from mpiscope.stats.medians import bootstrap_medians, percentile_interval, replicate_stderr
from mpiscope.common.sizes import format_size
from mpiscope.stats.quality import MIN_SAMPLES
from mpiscope.store.ingest import load
from mpiscope.store.run import Run
from mpiscope.store.series import all_series_samples, bench_label

DEFAULT_NOISE = 0.02
DEFAULT_ALPHA = 0.05
DEFAULT_SEED = 1
DEFAULT_BOOT = 2000
CI_METHOD = "bootstrap percentile (each run resampled independently)"
FASTER, SLOWER, SAME, INSUFFICIENT = "faster", "slower", "same", "insufficient"


def min_samples(alpha: float = DEFAULT_ALPHA) -> int:
    """The fewest valid samples each run needs for a verdict: MIN_SAMPLES (a
    median with a 95% CI), and enough for the exact two-sided Mann–Whitney
    test of n against n samples to reach p < alpha at all (its smallest p is
    2 / C(2n, n): 0.0022 at n = 6, 0.00058 at n = 7)."""
    n = MIN_SAMPLES
    while 2.0 / math.comb(2 * n, n) >= alpha:
        n += 1
    return n


@dataclass(frozen=True)
class CompareRow:
    bench: str
    algo: str
    size: int
    unit: str  # "s" or "B/s"
    n_a: int
    n_b: int
    median_a: float
    median_b: float
    ratio: Estimate  # median B / median A of the stored values
    p_value: float  # two-sided Mann–Whitney U
    verdict: str  # faster / slower / same / insufficient: B against A

    @property
    def higher_is_better(self) -> bool:
        return self.unit == "B/s"

    @property
    def time_ratio(self) -> float:
        """B / A in time (inverted for bandwidths): above 1 means B is slower."""
        return 1.0 / self.ratio.point if self.higher_is_better else self.ratio.point

    def to_dict(self) -> dict:
        return {
            "bench": self.bench,
            "algo": self.algo,
            "size": self.size,
            "unit": self.unit,
            "n_a": self.n_a,
            "n_b": self.n_b,
            "median_a": self.median_a,
            "median_b": self.median_b,
            "ratio": self.ratio.to_dict(),
            "time_ratio": self.time_ratio,
            "p_value": self.p_value,
            "verdict": self.verdict,
        }


@dataclass
class Comparison:
    run_a: str
    run_b: str
    a: Run  # the runs, for their descriptions
    b: Run
    noise: float
    alpha: float
    level: float
    seed: int
    n_boot: int
    rows: list = field(default_factory=list)  # CompareRow, in run A's order
    only_a: list = field(default_factory=list)  # (bench, algo, size) measured in A only
    only_b: list = field(default_factory=list)
    skipped: list = field(default_factory=list)  # ((bench, algo, size), reason)
    geomean: Estimate | None = None  # of the time ratios

    @property
    def min_samples(self) -> int:
        return min_samples(self.alpha)

    @property
    def judged(self) -> list:
        """The rows with a verdict (enough samples in both runs)."""
        return [r for r in self.rows if r.verdict != INSUFFICIENT]

    def counts(self) -> dict:
        out = {FASTER: 0, SLOWER: 0, SAME: 0, INSUFFICIENT: 0}
        for r in self.rows:
            out[r.verdict] += 1
        return out

    def to_dict(self) -> dict:
        def key(k):
            return {"bench": k[0], "algo": k[1], "size": k[2]}

        return {
            "run_a": self.run_a,
            "run_b": self.run_b,
            "noise": self.noise,
            "alpha": self.alpha,
            "level": self.level,
            "seed": self.seed,
            "n_boot": self.n_boot,
            "min_samples": self.min_samples,
            "rows": [r.to_dict() for r in self.rows],
            "geomean_time_ratio": self.geomean.to_dict() if self.geomean else None,
            "counts": self.counts(),
            "only_a": [key(k) for k in self.only_a],
            "only_b": [key(k) for k in self.only_b],
            "skipped": [dict(key(k), reason=r) for k, r in self.skipped],
        }


# ---------------------------------------------------------------- one key


def verdict(ratio: Estimate, p_value: float, noise: float, alpha: float, higher_is_better: bool = False) -> str:
    """faster / slower / same for B against A, from the ratio B / A of the
    stored values: a change needs p < alpha and the whole CI outside
    [1 − noise, 1 + noise]."""
    if not p_value < alpha:
        return SAME
    if ratio.low > 1.0 + noise:
        return FASTER if higher_is_better else SLOWER
    if ratio.high < 1.0 - noise:
        return SLOWER if higher_is_better else FASTER
    return SAME


def compare_samples(
    a,
    b,
    rng: np.random.Generator,
    higher_is_better: bool = False,
    noise: float = DEFAULT_NOISE,
    alpha: float = DEFAULT_ALPHA,
    level: float = 0.95,
    n_boot: int = DEFAULT_BOOT,
):
    """Compare two samples (both non-empty, positive medians).

    Returns (ratio Estimate, p-value, verdict, bootstrap replicates of the
    ratio); the verdict is "insufficient" when a sample has fewer values than
    min_samples(alpha).
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    point = float(np.median(b) / np.median(a))
    boot_a = bootstrap_medians(a, n_boot, rng)
    boot_b = bootstrap_medians(b, n_boot, rng)
    with np.errstate(divide="ignore", invalid="ignore"):
        reps = boot_b / boot_a
    lo, hi = percentile_interval(reps, level)
    ratio = Estimate(point, replicate_stderr(reps), level, lo, hi, CI_METHOD)
    from scipy.stats import mannwhitneyu  # SciPy's stats take a second to import: only where a test runs

    p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
    if math.isnan(p):
        p = 1.0
    if min(len(a), len(b)) < min_samples(alpha):
        return ratio, p, INSUFFICIENT, reps
    return ratio, p, verdict(ratio, p, noise, alpha, higher_is_better), reps


# ---------------------------------------------------------------- two runs


def _keys(series):
    return {(b, algo, int(size)): s for b, algo, size, s in series}


def describe_keys(keys) -> str:
    """'pingpong, bw 1, 8, 1K B; barrier 0 B': benchmarks measured at the same
    sizes share their list (keys in order)."""
    groups: dict = {}
    for bench, algo, size in keys:
        groups.setdefault(bench_label(bench, algo), []).append(format_size(size))
    by_sizes: dict = {}
    for label, sizes in groups.items():
        by_sizes.setdefault(tuple(sizes), []).append(label)
    return "; ".join(f"{', '.join(labels)} {', '.join(sizes)} B" for sizes, labels in by_sizes.items()) or "nothing"


def _check_request(keys_a, keys_b, names, bench, size):
    """Refuse a --bench / --size that a run lacks, naming the run."""
    lacking = []
    for keys, name in zip((keys_a, keys_b), names):
        if bench is not None and not any(k[0] == bench for k in keys):
            benches = ", ".join(dict.fromkeys(bench_label(k[0], k[1]) for k in keys)) or "none"
            lacking.append(f"run {name} has no benchmark '{bench}' (it has: {benches})")
        elif size is not None and not any(k[2] == size and (bench is None or k[0] == bench) for k in keys):
            what = f"{bench} at {format_size(size)} B" if bench else f"size {format_size(size)} B"
            have = [k for k in keys if bench is None or k[0] == bench]
            lacking.append(f"run {name} has no {what} (it has: {describe_keys(have)})")
    if lacking:
        raise UsageError("cannot compare: " + "; ".join(lacking))


def compare_series(
    series_a,
    series_b,
    a: Run,
    b: Run,
    noise: float = DEFAULT_NOISE,
    alpha: float = DEFAULT_ALPHA,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
    n_boot: int = DEFAULT_BOOT,
    bench: str | None = None,
    size: int | None = None,
) -> Comparison:
    """Compare two lists of [(bench, algo, size, Samples)] (series.all_series_samples)."""
    if not 0.0 <= noise < 1.0:
        raise UsageError(f"noise band {noise} must be at least 0 and below 1 (e.g. 2% or 0.02)")
    if not 0.0 < alpha < 1.0:
        raise UsageError(f"alpha {alpha} must be between 0 and 1 (e.g. 0.05)")
    name_a, name_b = a.run_id, b.run_id
    keys_a, keys_b = _keys(series_a), _keys(series_b)
    _check_request(keys_a, keys_b, (f"A ({name_a})", f"B ({name_b})"), bench, size)

    def wanted(k):
        return (bench is None or k[0] == bench) and (size is None or k[2] == size)

    ka = [k for k in keys_a if wanted(k)]
    kb = [k for k in keys_b if wanted(k)]
    common = [k for k in ka if k in keys_b]
    result = Comparison(name_a, name_b, a, b, noise, alpha, level, seed, n_boot)
    result.only_a = [k for k in ka if k not in keys_b]
    result.only_b = [k for k in kb if k not in keys_a]
    if not common:
        raise UsageError(
            f"runs A ({name_a}) and B ({name_b}) have no benchmark × size in common: "
            f"A has {describe_keys(ka)}; B has {describe_keys(kb)}"
        )

    rng = np.random.default_rng(seed)
    log_reps = []
    for key in common:
        va, vb = keys_a[key].values, keys_b[key].values
        reason = None
        if len(va) == 0 or len(vb) == 0:
            reason = f"no valid samples in run {'A' if len(va) == 0 else 'B'}"
        elif not (np.median(va) > 0 and np.median(vb) > 0):
            reason = "a median is not positive, so a ratio means nothing"
        if reason:
            result.skipped.append((key, reason))
            continue
        u = keys_a[key].unit
        ratio, p, v, reps = compare_samples(va, vb, rng, u == "B/s", noise, alpha, level, n_boot)
        row = CompareRow(
            key[0], key[1], key[2], u, len(va), len(vb), float(np.median(va)), float(np.median(vb)), ratio, p, v
        )
        result.rows.append(row)
        if v == INSUFFICIENT:
            continue  # too few samples to judge: not summed up either
        with np.errstate(divide="ignore", invalid="ignore"):
            log_reps.append(np.log(reps) * (-1.0 if row.higher_is_better else 1.0))
    if result.judged:
        point = math.exp(float(np.mean([math.log(r.time_ratio) for r in result.judged])))
        reps = np.exp(np.mean(np.vstack(log_reps), axis=0))
        lo, hi = percentile_interval(reps, level)
        result.geomean = Estimate(point, replicate_stderr(reps), level, lo, hi, CI_METHOD)
    return result


def compare(
    run_a,
    run_b,
    noise: float = DEFAULT_NOISE,
    alpha: float = DEFAULT_ALPHA,
    seed: int = DEFAULT_SEED,
    level: float = 0.95,
    n_boot: int = DEFAULT_BOOT,
    bench: str | None = None,
    size: int | None = None,
) -> Comparison:
    """Compare two stored runs (directories); see the module note."""
    table_a, a = load(Path(run_a))
    table_b, b = load(Path(run_b))
    return compare_series(
        all_series_samples(table_a, a),
        all_series_samples(table_b, b),
        a,
        b,
        noise,
        alpha,
        seed,
        level,
        n_boot,
        bench,
        size,
    )
