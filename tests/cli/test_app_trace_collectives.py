# SPDX-License-Identifier: BSD-3-Clause
"""A traced application that communicates through collectives alone (as
MOCASSIN does: MPI_Allreduce and MPI_Barrier, no point-to-point message):
its pattern is read (app/trace_pattern.py) and its what-if simulated
(app/scale.py), from a synthetic traced profile of 4 ranks in the
profiler's raw format."""

import json

from mpiscope.app.scale import whatif
from mpiscope.app.trace_pattern import traced_pattern
from mpiscope.sim.costs import SimCosts
from mpiscope.sim.simulate import Extras
from profilegen import write_profile

P = 4
TRACE = [("MPI_Allreduce", 1e-3, 3e-3, 524288, -1, P, 0), ("MPI_Barrier", 4e-3, 5e-3, 0, -1, P, 0),
         ("MPI_Allreduce", 6e-3, 8e-3, 524288, -1, P, 0)]


def test_a_trace_of_collectives_alone(tmp_path):
    cells = [("MPI_Allreduce", P, "node", 20, 2, 1048576, 4e-3), ("MPI_Barrier", P, "node", 0, 1, 0, 1e-3)]
    run = write_profile(tmp_path / "prof", P, 0.01, {r: cells for r in range(P)}, {r: TRACE for r in range(P)},
                        {r: [list(range(P))] for r in range(P)})
    traced = traced_pattern(run)
    assert traced.pattern.p == P and set(traced.calls) == {"MPI_Allreduce", "MPI_Barrier"}
    kinds = {k for nodes in traced.pattern.nodes for k, _, _ in nodes}
    assert "coll" in kinds and not kinds & {"send", "recv"}

    tune = tmp_path / "tune"
    tune.mkdir()
    (tune / "tune.json").write_text(json.dumps({
        "library": "openmpi", "version": "4.1.4", "p": P, "ps": [P],
        "rules": {"allreduce": {str(P): [{"start": 0, "algorithm": "ring"}]}},
        "default_runs": [{"collective": "allreduce", "p": P, "size": 524288, "algorithm": "recursive_doubling",
                          "as_forced": True}],
        "verification": {"cells": []}}))
    w = whatif(run, tune, [8], SimCosts(alpha_s=5e-5, beta_s=8e-8), Extras(replicates=2, seed=3))
    (at8,) = w.points
    assert at8.p == 8 and at8.nops > w.validation.nops
    assert at8.default.median_s > 0 and at8.tuned.median_s > 0
    assert {(s.ours_default, s.ours_tuned) for s in w.selections if s.collective == "allreduce"} == \
        {("recursive_doubling", "ring")}
