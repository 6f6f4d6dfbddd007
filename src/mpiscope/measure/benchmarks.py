# SPDX-License-Identifier: BSD-3-Clause
"""Suites: the benchmarks and sizes `mpiscope run --suite` measures by default.

Which benchmarks exist, and what each one is (rule, unit, minimum ranks,
sizeless, variants), the engine says itself (engine/describe.py); a suite
only chooses among them (tests/mpi/test_describe_coverage.py checks every name here).
"""

SUITES = {
    # The shapes that matter most, in little time.
    "quick": {
        "bench": ("pingpong", "oneway", "bw", "ring", "barrier", "bcast", "allreduce", "allgather", "alltoall"),
        "sizes": "1-1M:x8",
    },
    # IMB-like coverage: every point-to-point benchmark and MPI collective, 1 B to 4 MiB.
    "full": {
        "bench": (
            "pingpong",
            "oneway",
            "multipair",
            "ring",
            "bw",
            "bibw",
            "barrier",
            "bcast",
            "reduce",
            "allreduce",
            "allgather",
            "gather",
            "scatter",
            "alltoall",
            "reduce_scatter_block",
        ),
        "sizes": "1-4M:x2",
    },
    # LogGP parameters and the same message at several layers (mpiscope loggp,
    # mpiscope layers). Their variants (queue depths, overhead steps, one-sided
    # modes, layers) multiply the series, so they are not part of "full".
    "loggp": {
        "bench": ("oneway", "flood", "overhead", "rma_lat", "rma_flood", "layer_pingpong", "layer_bw"),
        "sizes": "8-1M:x8",
    },
    # The intra-node transport lab (mpiscope transport): every design and MPI's
    # own path, 1 B to 16 MiB; six variants each, so not part of "full".
    "transport": {
        "bench": ("tp_latency", "tp_bw", "tp_bw_cold", "tp_multibw", "tp_skew", "tp_overlap"),
        "sizes": "1-16M:x4",
    },
}


def series_count(benches, sizes, sizeless=(), variants=None):
    """Series a run measures per launch: a sizeless benchmark once, the others
    at every size; `variants`: {bench: variants it runs} (default 1)."""
    variants = variants or {}
    return sum((1 if b in sizeless else len(sizes)) * variants.get(b, 1) for b in benches)
