# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: a synthetic traced profile of 4 ranks for the what-if at
scale, written in the profiler's raw format (profilegen.py): a ring of
point-to-point messages, an allreduce on all ranks, a broadcast on pairs of
ranks (root 1) and a barrier; and tune.json documents whose rules and
default readings a test chooses."""

import json

from mpiscope.app.trace_pattern import traced_pattern
from mpiscope.sim.replicate import Algorithms, read_binary, write_schedule
from profilegen import write_profile

P = 4


def trace(r):
    """(call, t0, t1, bytes, peer or root, communicator size, index in the rank's communicators:
    0 the world, 1 its pair)."""
    return [("MPI_Irecv", 0.0, 1e-6, 1000, (r - 1) % P, P, 0),
            ("MPI_Send", 2e-6, 1e-5, 1000, (r + 1) % P, P, 0),
            ("MPI_Wait", 2e-5, 3e-5, 0, -1, 0, -1),
            ("MPI_Allreduce", 1e-3, 1.1e-3, 64, -1, P, 0),
            ("MPI_Bcast", 2e-3, 2.1e-3, 128, 1, 2, 1),
            ("MPI_Barrier", 3e-3, 3.1e-3, 0, -1, P, 0)]


def write_run(path):
    """The traced profile, ingested, at `path`."""
    cells = [(c, q, "node", 1, 1, b, t1 - t0) for c, t0, t1, b, _, q, _ in trace(0) if q > 0]
    comms = {r: [list(range(P)), [0, 1] if r < 2 else [2, 3]] for r in range(P)}
    return write_profile(path, P, 0.01, {r: cells for r in range(P)}, {r: trace(r) for r in range(P)}, comms)


def write_tune(path, rules, default_runs, ps=(4,)):
    """A tune directory whose tune.json holds `rules` {collective: {p: [(start, algorithm)]}} and
    the default's readings `default_runs` [(collective, p, size, algorithm)]."""
    path.mkdir()
    doc = {"library": "openmpi", "version": "4.1.4", "p": ps[0], "ps": list(ps),
           "rules": {c: {str(p): [{"start": s, "algorithm": a} for s, a in rs] for p, rs in by_p.items()}
                     for c, by_p in rules.items()},
           "default_runs": [{"collective": c, "p": p, "size": s, "algorithm": a, "as_forced": True}
                            for c, p, s, a in default_runs],
           "verification": {"cells": []}}
    (path / "tune.json").write_text(json.dumps(doc))
    return path


def write_mixed_tune(path):
    """Rules for 2 and 4 ranks: allreduce ring from 1 KiB on 4; bcast binomial on 2, the default on 4."""
    return write_tune(path, {"allreduce": {4: [(0, "default"), (1024, "ring")]},
                             "bcast": {2: [(0, "binomial")], 4: [(0, "default")]}},
                      [("allreduce", 4, 8, "recursive_doubling"), ("allreduce", 4, 65536, "rabenseifner"),
                       ("bcast", 2, 8, "pipeline"), ("bcast", 4, 8, "binomial")], ps=(2, 4))


def replicated(run, tmp_path, p_new, choose):
    """The traced pattern replicated to `p_new` ranks, read back from its binary schedule."""
    pattern = traced_pattern(run).pattern
    path = tmp_path / "app.bin"
    info = write_schedule(pattern, p_new, choose, Algorithms(8192), path, 10 ** 6)
    return read_binary(path), info
