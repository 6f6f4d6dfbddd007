# SPDX-License-Identifier: BSD-3-Clause
"""The report's transport lab section (transport/advise.py over all the
report's runs that measured tp_* benchmarks, and the MPI libraries' own
paths among them): the curves per design with MPI beside them, the
crossover table, what the probe found, the settings."""

from __future__ import annotations

from mpiscope.common.errors import UsageError
from mpiscope.report.pool import draw
from mpiscope.transport.advise import advise

PANELS = (
    ("tp_latency", "lib_latency", "latency: half round trip (µs)"),
    ("tp_bw", "lib_bw", "bandwidth, warm buffers (MB/s)"),
    ("tp_bw_cold", "lib_bw_cold", "bandwidth, cold buffers (MB/s)"),
    ("tp_skew", None, "late receiver: the sender's time (µs)"),
)


def transport_views(runs) -> list:
    """[one section per placement class]; runs: [(label, run_dir, table, run)]."""
    dirs = [d for _, d, _, _ in runs]
    try:
        a = advise(dirs)
    except UsageError:
        return []  # no run measured the lab
    out = []
    for cls in a.lab.placements():
        panels = []
        for bench, lib, title in PANELS:
            lines = {algo: c.medians for (b, p, algo), c in a.lab.curves.items() if b == bench and p == cls}
            if lib:
                lines.update({f"MPI {f} ({m})": c.medians for (f, m), c in a.lab.library_paths(lib, cls).items()})
            if lines:
                panels.append({"title": title, "bw": "bw" in bench, "lines": lines})
        t = a.thresholds[cls]
        out.append(
            {
                "placement": cls,
                "runs": [r.run_id for r in a.lab.runs],
                "cma": "ran" if t.cma_ok else f"did not run: {t.cma_why}",
                "crossovers": [x.to_dict() for x in a.crossovers if x.placement == cls],
                "library": [
                    {"family": f, "single_from": s, "copy_up_to": c}
                    for f, (s, c) in sorted(a.library.get(cls, {}).items())
                ],
                "best": [dict(vars(r)) for b in ("tp_latency", "tp_bw") for r in a.best[b] if r.placement == cls],
                "settings": [s.to_dict() for s in a.settings[cls]],
                "svg": draw("transport_curves", panels),
            }
        )
    return out
