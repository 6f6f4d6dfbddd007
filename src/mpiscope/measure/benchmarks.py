"""What the engine can measure, with each benchmark's rank requirements."""

POINT_TO_POINT = ("pingpong", "oneway", "multipair", "pairs", "ring", "bw", "bibw")
COLLECTIVES = ("barrier", "bcast", "reduce", "allreduce", "allgather", "gather", "scatter",
               "alltoall", "reduce_scatter_block")
ALL = POINT_TO_POINT + COLLECTIVES
MIN_RANKS = {name: 2 for name in POINT_TO_POINT} | {name: 1 for name in COLLECTIVES}

SUITES = {
    # A minute or so on a laptop: the shapes that matter most.
    "quick": {"bench": ("pingpong", "oneway", "bw", "ring", "barrier", "bcast", "allreduce",
                        "allgather", "alltoall"),
              "sizes": "1-1M:x8"},
    # IMB-like coverage: every benchmark, 1 B to 4 MiB in powers of two.
    "full": {"bench": tuple(b for b in ALL if b != "pairs"), "sizes": "1-4M:x2"},
}

SIZELESS = ("barrier", "empty")  # measured once, at size 0

# LogGP parameters and the same message at several layers (mpiscope loggp,
# mpiscope layers). Their variants (queue depths, overhead steps, one-sided
# modes, layers) multiply the series, so they have a suite of their own and
# are not part of "full".
LOGGP = ("flood", "overhead", "rma_lat", "rma_flood")
LAYERS = ("layer_pingpong", "layer_bw")
ALL = ALL + LOGGP + LAYERS
MIN_RANKS.update({name: 2 for name in LOGGP + LAYERS})
# The harness's own cost (bench/harness_overhead.py): a repetition with
# nothing timed, and ping-pong as a loop timed as a whole.
HARNESS = ("empty", "pingpong_loop")
ALL = ALL + HARNESS
MIN_RANKS.update({name: 2 for name in HARNESS})
SUITES["loggp"] = {"bench": ("oneway", "flood", "overhead", "rma_lat", "rma_flood",
                             "layer_pingpong", "layer_bw"),
                   "sizes": "8-1M:x8"}


def series_count(benches, sizes, variants=None):
    """Series a run measures per launch; `variants`: {bench: variants it runs} (default 1)."""
    variants = variants or {}
    return sum((1 if b in SIZELESS else len(sizes)) * variants.get(b, 1) for b in benches)
