# SPDX-License-Identifier: BSD-3-Clause
"""Costs from a run's measurements: the Hockney fit of a point-to-point
benchmark of it, the per-size distributions of its samples (the simulator
draws each message's time from them), and its collectives' arrival skew.
The benchmark is `pingpong` (one message at a time between two ranks) or
`ring` (every rank sends to its right neighbour while it receives from its
left: one message per rank under the load of all the others, as in most
collective algorithms' steps). With both, the ring's floor less the
pingpong's is what a message with one the other way at once costs more
than one alone (an exchange: at 2 ranks the ring is one)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow.compute as pc

from mpiscope.common.errors import UsageError
from mpiscope.models.fits import fit_run
from mpiscope.models.costmodels import COLLECTIVES
from mpiscope.store.ingest import load
from mpiscope.store.series import all_series_samples
from mpiscope.sim.costs import SimCosts
from mpiscope.sim.link_line import floor_line, floor_time

QUANTILES = 101  # levels 0, 1 %, ..., 100 % of each size's samples


P2P = ("pingpong", "ring")


def fitted_costs(run_dir, p2p="pingpong") -> SimCosts:
    """α on the sender's channel, β as G: the sender's link and the
    receiver's link both carry the bytes, so a rank's sends follow one
    another and messages into one rank queue at its link; one message alone
    costs α + β·m, as the fit says."""
    try:
        result = fit_run(run_dir, bench=p2p)
    except UsageError:
        raise UsageError(
            f"the run has no {p2p} to fit α and β from: measure it too "
            f"(mpiscope run --bench {p2p},… ) or give --machine FILE"
        ) from None
    fit = result.fits[0] if result.fits else None
    if fit is None or fit.hockney is None:
        raise UsageError(
            f"cannot fit α and β from the run's {p2p} "
            f"({fit.note if fit else 'no sizes'}): measure it at two sizes or more"
        )
    return SimCosts(
        alpha_s=max(0.0, fit.hockney.alpha.point),
        G=max(0.0, fit.hockney.beta.point),
        source=f"Hockney fit of the run's {p2p}",
    )


def _p2p_series(run_dir, p2p, min_samples=1) -> list[tuple[int, np.ndarray]]:
    """(size, samples) of the run's `p2p` series with at least min_samples, by size."""
    table, run = load(Path(run_dir))
    return sorted(
        (
            (int(size), np.asarray(smp.values, dtype=float))
            for bench, algo, size, smp in all_series_samples(table, run)
            if bench == p2p and algo in (None, "mpi") and len(smp.values) >= min_samples
        ),
        key=lambda row: row[0],
    )


def _medians(run_dir, p2p) -> list[tuple[int, float]]:
    """(size, median) of the run's `p2p` series, by size."""
    return [(size, float(np.median(v))) for size, v in _p2p_series(run_dir, p2p)]


SHAPED_FIT_SIZES = 3  # the fewest pingpong sizes the line of a shaped link goes through


def shaped_link_costs(run_dir, latency_p2p="pingpong") -> SimCosts:
    """A link shaped by a token bucket (a traffic shaper, the emulated
    cluster's tbf), fitted to the run's pingpong: a message larger than the
    bucket finds it full after the pong, so over the larger half of the sizes
    time = c + G·m, fitted robustly to stalls (sim/link_line.py), and a lone
    message costs L + G·max(0, m − burst) with L the smallest size's time:
    burst = (L − c)/G, both on the repetitions' floor. A line above L (no
    burst to see) keeps its excess as a cost per message instead. The
    latency simulated is `latency_p2p`'s median at its smallest size (ring:
    under every rank's load, as in a collective's steps)."""
    series = _p2p_series(run_dir, "pingpong")
    n_fit = max(SHAPED_FIT_SIZES, (len(series) + 1) // 2)
    if len(series) < n_fit + 1:
        raise UsageError(
            f"a shaped link is fitted to pingpong at {SHAPED_FIT_SIZES + 1} sizes or more, the run "
            f"has {len(series)}: measure e.g. --bench pingpong --sizes 256-256K:x2"
        )
    top = series[-n_fit:]
    G, c = floor_line(top)
    if not G * (top[-1][0] - top[0][0]) > 0.01 * floor_time(top[-1][1]):  # grows by less than 1%: no rate to see
        sizes = ", ".join(str(size) for size, _ in top)
        raise UsageError(
            f"pingpong's time does not grow over its largest sizes ({sizes} B): "
            "no link rate to fit; measure larger sizes"
        )
    lat = _medians(run_dir, latency_p2p) if latency_p2p != "pingpong" else [(s, float(np.median(v))) for s, v in series]
    if not lat:
        raise UsageError(f"the run has no {latency_p2p} to take the latency from: measure it too")
    L_pp, L = floor_time(series[0][1]), lat[0][1]
    burst = max(0.0, (L_pp - c) / G)
    note = (
        ""
        if c < L_pp
        else (f" (no burst: its line lies {(c - L_pp) * 1e6:.3g} us above its latency, a cost per message)")
    )
    return SimCosts(
        L=L,
        G=float(G),
        burst=burst,
        alpha_s=max(0.0, c - L_pp),
        source=f"shaped link fitted to the run's pingpong: {1e-6 / G:.4g} MB/s, burst {burst:.0f} B"
        f"{note}; latency {L * 1e6:.4g} us, its {latency_p2p} at {lat[0][0]} B",
    )


def exchange_shift(run_dir) -> tuple[np.ndarray, np.ndarray] | None:
    """(sizes, seconds): per size measured by both, the ring's floor less
    the pingpong's (sim/link_line.py: stalls that hit some repetitions do
    not move it), what the simulator adds to an exchange message's time (one
    whose sender receives from its peer at once); None without both."""
    pingpong = dict(_p2p_series(run_dir, "pingpong"))
    both = [
        (size, floor_time(t) - floor_time(pingpong[size]))
        for size, t in _p2p_series(run_dir, "ring")
        if size in pingpong
    ]
    if not both:
        return None
    return np.array([s for s, _ in both], dtype=float), np.array([d for _, d in both])


def with_exchange(extras, run_dir):
    """`extras` (sim.simulate.Extras) with the run's exchange shift where it
    measured ring beside pingpong."""
    extras.exchange = exchange_shift(run_dir)
    return extras


def write_exchange(path, sizes, seconds) -> Path:
    """The simulator's --exchange file."""
    path = Path(path)
    path.write_text("".join(f"{s:.0f} {d:.9e}\n" for s, d in zip(sizes, seconds)))
    return path


def p2p_quantiles(run_dir, p2p="pingpong") -> tuple[np.ndarray, np.ndarray]:
    """(sizes, quantiles[size, QUANTILES]) of the run's `p2p` samples."""
    rows = _p2p_series(run_dir, p2p, min_samples=2)
    if not rows:
        raise UsageError(
            f"the run has no {p2p} with two samples or more to draw message times from: "
            f"measure it too (mpiscope run --bench {p2p},…)"
        )
    levels = np.linspace(0, 1, QUANTILES)
    return (np.array([s for s, _ in rows], dtype=float), np.array([np.quantile(v, levels) for _, v in rows]))


def write_dist(path, sizes, quantiles) -> Path:
    """The simulator's --dist file."""
    path = Path(path)
    lines = [f"{quantiles.shape[1]}"] + [
        " ".join([f"{s:.0f}"] + [f"{q:.9e}" for q in row]) for s, row in zip(sizes, quantiles)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def arrival_skew(run_dir) -> np.ndarray:
    """Every rank's lateness in the run's collective repetitions (seconds,
    global clock): its start after the agreed start of a window-started
    repetition (what the measured time counts from), else after the earliest
    rank's start."""
    table, run = load(Path(run_dir))
    t = table.filter(pc.field("valid")).select(["bench", "algo", "size", "launch", "rep", "t_start", "t_sched"])
    df = t.to_pandas()
    df = df[df["bench"].isin(list(COLLECTIVES))]
    if df.empty:
        raise UsageError("the run has no collective repetitions to take the arrival skew from")
    group = df.groupby(["bench", "algo", "size", "launch", "rep"])
    first, sched = group["t_start"].transform("min"), group["t_sched"].transform("min")
    origin = np.where(np.isfinite(sched), np.minimum(sched, first), first)
    return (df["t_start"] - origin).to_numpy(dtype=float)
