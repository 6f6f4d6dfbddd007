# SPDX-License-Identifier: BSD-3-Clause
"""Series of raw schema 1 files (and of runs stored from them), whose blocks
name no sample rule: the rule and timed role schema 1 implies for each
benchmark. Fixed, and read only for schema-1 runs; schema-2 blocks name the
rule of every series themselves (docs/reference/formats/raw-files.md)."""

_RULES = {
    "pingpong": "half_round_trip",
    "layer_pingpong": "half_round_trip",
    "empty": "duration",
    "pingpong_loop": "loop_half_round_trip",
    "flood": "per_message",
    "overhead": "per_message",
    "rma_lat": "per_message",
    "rma_flood": "per_message",
    "layer_bw": "per_message",
    "bw": "bandwidth",
    "bibw": "bidirectional_bandwidth",
    "oneway": "one_way",
    "multipair": "pair_exchange",
    "pairs": "pair_exchange",
}


def rule(bench: str) -> str:
    """Collectives, ring and anything else were one operation over all ranks."""
    return _RULES.get(bench, "slowest_rank")


def timed_role(bench: str, algo) -> str:
    """The receive-overhead variants ("or+…") timed rank 1, the responder."""
    return "responder" if bench == "overhead" and str(algo or "").startswith("or") else "initiator"
