"""Costs from a run's measurements: the Hockney fit of a point-to-point
benchmark of it, the per-size distributions of that benchmark's samples
(the simulator draws each message's time from them), and the arrival skew
of its collectives (each rank's start minus the earliest rank's, per
repetition).

The benchmark is `pingpong` (one message at a time between two ranks) or
`ring` (every rank sends to its right neighbour while it receives from its
left: one message per rank under the load of all the others, as in the
steps of most collective algorithms)."""

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
        raise UsageError(f"the run has no {p2p} to fit α and β from: measure it too "
                         f"(mpiscope run --bench {p2p},… ) or give --machine FILE") from None
    fit = result.fits[0] if result.fits else None
    if fit is None or fit.hockney is None:
        raise UsageError(f"cannot fit α and β from the run's {p2p} "
                         f"({fit.note if fit else 'no sizes'}): measure it at two sizes or more")
    return SimCosts(alpha_s=max(0.0, fit.hockney.alpha.point), G=max(0.0, fit.hockney.beta.point),
                    source=f"Hockney fit of the run's {p2p}")


def p2p_quantiles(run_dir, p2p="pingpong") -> tuple[np.ndarray, np.ndarray]:
    """(sizes, quantiles[size, QUANTILES]) of the run's `p2p` samples."""
    table, run = load(Path(run_dir))
    rows = [(int(size), np.asarray(smp.values, dtype=float))
            for bench, algo, size, smp in all_series_samples(table, run)
            if bench == p2p and algo in (None, "mpi") and len(smp.values) >= 2]
    if not rows:
        raise UsageError(f"the run has no {p2p} with two samples or more to draw message times from: "
                         f"measure it too (mpiscope run --bench {p2p},…)")
    rows.sort()
    levels = np.linspace(0, 1, QUANTILES)
    return (np.array([s for s, _ in rows], dtype=float),
            np.array([np.quantile(v, levels) for _, v in rows]))


def write_dist(path, sizes, quantiles) -> Path:
    """The simulator's --dist file."""
    path = Path(path)
    lines = [f"{quantiles.shape[1]}"] + [" ".join([f"{s:.0f}"] + [f"{q:.9e}" for q in row])
                                          for s, row in zip(sizes, quantiles)]
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
