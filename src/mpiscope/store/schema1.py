"""Series recorded before the engine named their sample rule (raw schema 1,
and runs stored from such files): the rule and timed role that engine
applied to each benchmark. Frozen history, read only for old runs; the
engine's own blocks name the rule of everything measured since."""

_RULES = {
    "pingpong": "half_round_trip", "layer_pingpong": "half_round_trip",
    "empty": "duration", "pingpong_loop": "loop_half_round_trip",
    "flood": "per_message", "overhead": "per_message", "rma_lat": "per_message",
    "rma_flood": "per_message", "layer_bw": "per_message",
    "bw": "bandwidth", "bibw": "bidirectional_bandwidth",
    "oneway": "one_way", "multipair": "pair_exchange", "pairs": "pair_exchange",
}


def rule(bench: str) -> str:
    """Collectives, ring and anything else were one operation over all ranks."""
    return _RULES.get(bench, "slowest_rank")


def timed_role(bench: str, algo) -> str:
    """The receive-overhead variants ("or+…") timed rank 1, the responder."""
    return "responder" if bench == "overhead" and str(algo or "").startswith("or") else "initiator"
