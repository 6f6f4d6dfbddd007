# SPDX-License-Identifier: BSD-3-Clause
"""The guided search's costs when the user gives none (--from-run, --machine):
a pingpong launch on the tune's own layout, stored beside its other runs, and
the Hockney fit of it (sim/measured.py: fitted_costs), as `mpiscope run --bench
pingpong` and --from-run would give. Method: docs/explanation/tuner.md."""

from __future__ import annotations

import dataclasses
import sys

from mpiscope.common.errors import LaunchFailed

FIT_SIZES = (8, 65536)  # added to a grid of fewer than two sizes: the fit needs two


def pingpong_sizes(sizes) -> list:
    """The tune's sizes, or with FIT_SIZES where they are fewer than two."""
    grid = {int(s) for s in sizes}
    return sorted(grid if len(grid) >= 2 else grid | set(FIT_SIZES))


def measured_costs(plan, sizes, say=print):
    """Launches pingpong with `plan` at `sizes`; returns (SimCosts, run id)."""
    from mpiscope.measure import runner
    from mpiscope.sim.measured import fitted_costs
    from mpiscope.tune.measure import launch_timeout

    grid = pingpong_sizes(sizes)
    p = dataclasses.replace(
        plan,
        benches=["pingpong"],
        sizes=grid,
        sizeless=[],
        label=None,
        launch_timeout=launch_timeout(plan, ["pingpong"], grid),
    )
    say("the guided search's point-to-point costs: pingpong between ranks 0 and 1")
    run_dir, context = runner.run(p, [sys.argv[0], "tune", "pingpong"])
    if context["status"] != "completed":
        raise LaunchFailed(
            f"the pingpong launch for the guided search's costs failed ({context.get('error')}): "
            "give --from-run RUN or --machine FILE, or choose --search adaptive"
        )
    return fitted_costs(run_dir), context["run_id"]
