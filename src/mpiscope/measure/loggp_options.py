# SPDX-License-Identifier: BSD-3-Clause
"""The LogGP benchmarks' settings of a run (flood, overhead, rma_flood:
--queue-depths, --overhead-steps, --flood-bytes) and the number of variants
each benchmark runs (for the progress total).

Parsing and validation live here so the option's check (cli/types.py), the
plan and the engine's command line each need one line for them.
"""

from __future__ import annotations

from mpiscope.common.errors import UsageError
from mpiscope.common.sizes import parse_size_option

DEFAULT_QUEUE_DEPTHS = (1, 2, 4, 8, 16, 32, 64)
DEFAULT_OVERHEAD_STEPS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
DEFAULT_FLOOD_BYTES = 8 * 1024 * 1024
MAX_QUEUE_DEPTH = 65536

# Benchmarks with a fixed list of variants (native/engine/bench/rma.c, layers.c, transport.c).
TRANSPORT_VARIANTS = ("basic", "advanced", "cma", "offload", "hybrid", "mpi")
FIXED_VARIANTS = {
    "rma_lat": ("put_flush", "get_flush", "put_fence", "get_fence"),
    "rma_flood": ("put_flush", "get_flush", "put_fence", "get_fence"),
    "layer_pingpong": ("mpi", "tcp", "shm"),
    "layer_bw": ("mpi", "tcp", "shm"),
    **{b: TRANSPORT_VARIANTS for b in ("tp_latency", "tp_bw", "tp_bw_cold", "tp_multibw", "tp_skew", "tp_overlap")},
    "tp_poll": ("static", "adaptive"),
}


def parse_queue_depths(text) -> list[int]:
    items = [x.strip() for x in str(text).split(",") if x.strip()]
    if not items or not all(x.isdigit() for x in items):
        raise UsageError(f"--queue-depths expects a comma list of positive integers, got '{text}'")
    depths = [int(x) for x in items]
    if any(q < 1 or q > MAX_QUEUE_DEPTH for q in depths):
        raise UsageError(f"--queue-depths: every depth must be within 1..{MAX_QUEUE_DEPTH}, got '{text}'")
    if len(set(depths)) != len(depths):
        raise UsageError(f"--queue-depths lists a depth twice: '{text}'")
    return depths


def parse_overhead_steps(text) -> list[float]:
    try:
        steps = [float(x) for x in str(text).split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--overhead-steps expects a comma list of numbers >= 0, got '{text}'") from None
    if not steps or any(not 0 <= f <= 1000 for f in steps):
        raise UsageError(f"--overhead-steps: every step must be within 0..1000, got '{text}'")
    if len(set(steps)) != len(steps):
        raise UsageError(f"--overhead-steps lists a step twice: '{text}'")
    return steps


def plan_fields(request) -> dict:
    """Validated values for the Plan from a MeasureRequest (None: the engine's default)."""
    qd, st, fb = request.queue_depths, request.overhead_steps, request.flood_bytes
    flood_bytes = parse_size_option("--flood-bytes", fb, minimum=1) if fb is not None else None
    return {
        "queue_depths": parse_queue_depths(qd) if qd is not None else None,
        "overhead_steps": parse_overhead_steps(st) if st is not None else None,
        "flood_bytes": flood_bytes,
    }


def engine_args(plan) -> list[str]:
    """The engine options for the plan's LogGP settings (none when defaults)."""
    out = []
    if getattr(plan, "queue_depths", None):
        out += ["--queue-depths", ",".join(map(str, plan.queue_depths))]
    if getattr(plan, "overhead_steps", None):
        out += ["--overhead-steps", ",".join(f"{f:g}" for f in plan.overhead_steps)]
    if getattr(plan, "flood_bytes", None):
        out += ["--flood-bytes", str(plan.flood_bytes)]
    return out


def variant_counts(plan) -> dict:
    """{bench: number of variants} of the benchmarks with more than one."""
    qd = getattr(plan, "queue_depths", None) or DEFAULT_QUEUE_DEPTHS
    st = getattr(plan, "overhead_steps", None) or DEFAULT_OVERHEAD_STEPS
    counts = {"flood": len(qd), "overhead": 2 * len(st)}
    counts.update({b: len(v) for b, v in FIXED_VARIANTS.items()})
    return counts
