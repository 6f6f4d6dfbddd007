# SPDX-License-Identifier: BSD-3-Clause
"""Everything the statistics say about one series, as plain JSON-able data.

analyze_series() bundles, for one bench × algo × size (all launches): the summary
(stats.describe), the labelled outliers, the tail tables (tails.py), the modes
with retransmission-timeout flags (modes.py), the slowest ranks of collectives
(ranks.py) and the variation between launches (launches.py). Numbers are in base
units; every non-finite number becomes None. For bw/bibw the tails and modes are
about time: they are computed on each repetition's duration, and "on" says so."""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from mpiscope.stats import launches as _launches
from mpiscope.stats import modes as _modes
from mpiscope.stats import ranks as _ranks
from mpiscope.stats import rto as _rto
from mpiscope.stats import tails as _tails
from mpiscope.stats.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from mpiscope.store.run import Run
from mpiscope.store.samples import DEFAULT_WINDOW_MSGS, series_rule, series_samples
from mpiscope.common.jsonable import plain
from mpiscope.stats.summary import LABEL_FAR, LABEL_OUTLIER, describe

MAX_LISTED_OUTLIERS = 20


@functools.lru_cache(maxsize=1)
def host_rto_min() -> dict:
    """RTO_min of this host (rto.rto_min), read once per process."""
    return _rto.rto_min()


def _algo_of(series: pa.Table):
    if series.num_rows == 0:
        return None
    algos = sorted(pc.unique(series["algo"]).to_pylist())
    if len(algos) > 1:
        raise ValueError(f"one series at a time: several algorithms ({', '.join(algos)})")
    return algos[0]


def _durations(samples, bench, size, algo, run):
    """Duration of each bw/bibw repetition from its bandwidth (None if size is 0)."""
    if size <= 0:
        return None
    rule, _, msgs = series_rule(run, bench, size, algo)
    per_launch = np.array([msgs.get(int(k)) or DEFAULT_WINDOW_MSGS for k in samples.launch.tolist()], dtype=np.float64)
    nbytes = size * per_launch * (2.0 if rule == "bidirectional_bandwidth" else 1.0)
    with np.errstate(divide="ignore"):
        return np.where(samples.values > 0, nbytes / samples.values, np.nan)


def _source_label(a, b):
    return str(a) if b < 0 else f"{a}->{b}"


def _source_codes(samples):
    """(index of each sample's source, source labels), without building a
    label per sample."""
    key = samples.source_a.astype(np.int64) * (1 << 32) + (samples.source_b.astype(np.int64) + 1)
    uniq, codes = np.unique(key, return_inverse=True)
    names = [_source_label(int(k >> 32), int(k & 0xFFFFFFFF) - 1) for k in uniq.tolist()]
    return codes, names


def _outliers(summary, samples):
    labels = summary["labels"]
    flagged = np.flatnonzero((labels == LABEL_FAR) | (labels == LABEL_OUTLIER))
    v = samples.values
    centre = summary["median"].point
    # The farthest from the median first, far before outlier.
    rank = np.lexsort((-np.abs(v[flagged] - centre), labels[flagged] != LABEL_FAR))
    listed = flagged[rank][:MAX_LISTED_OUTLIERS]
    out = dict(summary["tukey"])
    out["listed"] = [
        {
            "launch": int(samples.launch[i]),
            "rep": int(samples.rep[i]),
            "source": _source_label(int(samples.source_a[i]), int(samples.source_b[i])),
            "value": float(v[i]),
            "label": str(labels[i]),
        }
        for i in listed.tolist()
    ]
    return out


def analyze_series(
    series: pa.Table,
    bench: str,
    size: int,
    run: Run,
    seed: int = DEFAULT_SEED,
    *,
    rto=None,
    level: float = 0.95,
    n_boot: int = DEFAULT_RESAMPLES,
) -> dict:
    """The statistics of one series: `series` holds exactly its rows (as
    samples.split_series gives them), `run` the run it belongs to.

    `rto` is RTO_min (seconds, or rto.rto_min()'s dict); by default the
    one recorded on the measured hosts (run.rto_min), else this host's,
    with where it came from. Every bootstrap uses `seed`.
    """
    size = int(size)
    algo = _algo_of(series)
    samples = series_samples(series, bench, size, algo, run)
    rto_info = _rto.as_rto(rto if rto is not None else run.rto_min or host_rto_min())
    summary = describe(samples.values, seed=seed, level=level, n_boot=n_boot)

    times, on = samples.values, "value"
    if samples.unit == "B/s":
        times = _durations(samples, bench, size, algo, run)
        on = "time per repetition (bytes moved / bandwidth)"
    tails = {"on": on, "rto_min_s": rto_info["rto_min_s"], "by_min": [], "by_sd": [], "by_rto": []}
    modes = None
    if times is not None:
        tails.update(
            {
                "by_min": _tails.by_min(times),
                "by_sd": _tails.by_sd(times),
                "by_rto": _tails.by_rto(times, rto_info["rto_min_s"]),
            }
        )
        codes, names = _source_codes(samples)
        modes = _modes.detect_modes(times, codes, rto_info, source_names=names)
        modes["on"] = on

    result = {
        "bench": bench,
        "algo": algo,
        "size": size,
        "unit": samples.unit,
        "seed": seed,
        "n": len(samples),
        "n_invalid": samples.n_invalid,
        "summary": {k: v for k, v in summary.items() if k not in ("labels", "tukey")},
        "outliers": _outliers(summary, samples),
        "tails": tails,
        "modes": modes,
        "ranks": _ranks.slowest_ranks(series) if samples.collective else None,
        "launches": _launches.launch_variation(samples.values, samples.launch, seed=seed, level=level, n_boot=n_boot),
    }
    return plain(result)
