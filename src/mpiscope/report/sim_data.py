# SPDX-License-Identifier: BSD-3-Clause
"""The report's simulation section: for each run with our own collective
algorithms and a point-to-point benchmark to take costs from, every
algorithm and size simulated next to measured (`mpiscope sim check`), and
the time chart of one simulated schedule."""

from __future__ import annotations

import tempfile
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.models.costmodels import COLLECTIVES
from mpiscope.report.timechart import draw
from mpiscope.sim.check import check_run
from mpiscope.sim.measured import fitted_costs
from mpiscope.sim.simulate import Extras, run_argv
from mpiscope.views.timechart import Chart

CHART_MAX_RANKS = 16


def simulated_chart(bench, algo, p, size, costs, extras=None) -> Chart:
    """The time chart of our algorithm simulated once (replicate 0)."""
    import pyarrow.csv as pcsv

    with tempfile.TemporaryDirectory(prefix="mpiscope-sim-") as tmp:
        trace = Path(tmp) / "trace.csv"
        argv = ["--bench", bench, "--algo", algo, "-p", p, "--size", size]
        run_argv(argv, costs, extras or Extras(), ["--trace", trace])
        t = pcsv.read_csv(trace)
    return chart_of(t, bench, algo, size)


def chart_of(t, bench, algo, size) -> Chart:
    """A Chart from the simulator's trace table (rank, seq, op 0/1, peer, tag, bytes, t_post, t_done)."""
    import pyarrow as pa

    ops = ["send" if x == 0 else "recv" for x in t["op"].to_pylist()]
    t = t.set_column(t.schema.get_field_index("op"), "op", pa.array(ops))
    return Chart(
        bench,
        algo,
        size,
        0,
        0,
        sorted(set(t["rank"].to_pylist())),
        t,
        0.0,
        {},
        sent=ops.count("send"),
        received=ops.count("recv"),
    )


def _costs(run_dir, benches):
    for p2p in ("ring", "pingpong"):
        if p2p in benches:
            try:
                return fitted_costs(run_dir, p2p)
            except UsageError:
                continue
    return None


def sim_views(runs, series) -> list[dict]:
    out = []
    for label, run_dir, _, run in runs:
        benches = {b for b, *_ in series[label]}
        if not benches & set(COLLECTIVES) or not any(a not in (None, "mpi") for _, a, *_ in series[label]):
            continue
        costs = _costs(run_dir, benches)
        if costs is None:
            continue
        try:
            res = check_run(run_dir, costs, Extras())
        except UsageError:
            continue
        view = {
            "label": label,
            "p": res.p,
            "source": costs.source,
            "within": res.within(0.15),
            "rows": [r.to_dict() for r in res.rows],
            "rankings": res.rankings(),
            "chart": None,
        }
        if res.rows and res.p <= CHART_MAX_RANKS:
            r = res.rows[0]
            chart = simulated_chart(r.bench, r.algo, res.p, r.size, res.costs)
            view["chart"] = {
                "svg": draw(chart),
                "caption": f"{r.bench}/{r.algo}, {r.size} B, {res.p} ranks, simulated with "
                f"{costs.source}: {chart.sent} sends and {chart.received} receives, "
                "drawn as mpiscope timechart draws a traced run.",
            }
        out.append(view)
    return out
