# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: synthetic stored runs with known latency and bandwidth curves,
for the model fits and run comparisons (no MPI)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from rawgen import RunBuilder, SeriesSpec, context_for

US = 1e-6
NS = 1e-9
MPICH_LIBRARY = "MPICH Version:\t4.0.2\nMPICH Release date: Thu May 19 11:34:11 CDT 2022"


def eager_rendezvous(size):
    """Half round trip: 1.5 µs + 0.25 ns/B up to 8K, then 6 µs + 0.1 ns/B."""
    return 1.5 * US + 0.25 * NS * size if size <= 8192 else 6.0 * US + 0.1 * NS * size


def bandwidth(size):
    """bw: size over a time per message of 0.4 µs + 0.125 ns/B (8 GB/s asymptote)."""
    return size / (0.4 * US + 0.125 * NS * size)


def allreduce(size):
    return 3.0 * US + 1.0 * NS * size


def barrier(size):
    return 2.0 * US


CURVES = {"pingpong": eager_rendezvous, "bw": bandwidth, "allreduce": allreduce,
          "barrier": barrier}
SIZES = [4 ** k for k in range(0, 12)]       # 1 B .. 4M, factor 4


def build_run(out_root, run_id, created, factor=1.0, bw_factor=1.0, seed=3, reps=31,
              sigma=0.03, benches=("pingpong", "bw", "allreduce"), sizes=SIZES,
              mpi="openmpi", extra=()):
    """A 2-rank run: every bench at every size, `reps` lognormal samples around
    the curve (times × factor, bandwidths × bw_factor; a dict bench -> factor
    sets each bench's own). `extra` adds (bench, size) series. Returns the
    run directory."""
    from mpiscope.store.ingest import ingest

    rng = np.random.default_rng(seed)
    run_dir = Path(out_root) / run_id
    library = MPICH_LIBRARY if mpi == "mpich" else None
    rb = _Builder(run_dir, nranks=2, mpi_library=library)
    series = [(b, s) for b in benches for s in sizes] + list(extra)
    for bench, size in series:
        f = CURVES[bench]
        if isinstance(factor, dict):
            scale = factor.get(bench, 1.0)
        else:
            scale = bw_factor if bench == "bw" else factor
        values = f(size) * scale * rng.lognormal(0.0, sigma, reps)
        rb.add(SeriesSpec(bench, size, [float(v) for v in values]))
    rb.write()
    context = context_for(run_id=run_id, created=created, np=2, mpi=mpi,
                          benches=sorted({b for b, _ in series}),
                          sizes=sorted({s for _, s in series}))
    (run_dir / "context.json").write_text(json.dumps(context, indent=2))
    ingest(run_dir, context)
    return run_dir


class _Builder(RunBuilder):
    """RunBuilder whose raw headers name the given MPI library."""

    def __init__(self, *args, mpi_library=None, **kwargs):
        super().__init__(*args, **kwargs)
        self.mpi_library = mpi_library

    def header(self, launch, rank):
        h = super().header(launch, rank)
        if self.mpi_library:
            h["mpi_library"] = self.mpi_library
        return h


def build_collectives_run(out_root, run_id="20240303-000000-cccc", created="2024-03-03T00:00:00+00:00"):
    """A 4-rank run of our own allgather algorithms (ring, recursive doubling)
    beside a pingpong, at 8 B, 1 KiB and 64 KiB, for model and sim check."""
    from mpiscope.store.ingest import ingest

    rb = RunBuilder(Path(out_root) / run_id, nranks=4)
    for size in (8, 1024, 65536):
        rb.add(SeriesSpec("pingpong", size, [(2 + size * 1e-3) * US] * 5))
        for algo in ("ring", "recursive_doubling"):
            rb.add(SeriesSpec("allgather", size, [(9 + size * 4e-3) * US] * 5, algo=algo))
    rb.write()
    ctx = context_for(run_id=run_id, created=created, np=4)
    (rb.run_dir / "context.json").write_text(json.dumps(ctx))
    ingest(rb.run_dir, ctx)
    return rb.run_dir
