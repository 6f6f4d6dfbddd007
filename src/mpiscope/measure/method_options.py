# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope run --methods`: the peers' measurement methods to run beside
mpiscope's own series, and the reference series their attribution needs.

`--methods` takes a comma list of the non-reference methods `mpiscope-engine
--describe` lists (osu, imb, skampi, mpptest, mpibench) or `all`. A method runs
on the benchmarks its tool measures; a benchmark no method measures gets a
note, and a list that reproduces nothing is refused. The reference series (a
barrier before every call; calls back to back; back to back with the root
rotating; fresh memory every call) are added where a chosen method differs from
mpiscope's own in that respect (methods/attribution.py compares them)."""

from __future__ import annotations

from mpiscope.common.errors import UsageError

REF_BARRIER, REF_B2B, REF_ROTATE, REF_CYCLE = "ref_barrier", "ref_b2b", "ref_rotate", "ref_cycle"


def parse_methods(text, known: dict) -> list[str]:
    """The --methods names, each once, in the engine's order; `known`: the
    engine's methods (engine/describe.py)."""
    peers = [name for name, m in known.items() if not m.reference]
    names = [x.strip() for x in str(text).split(",") if x.strip()]
    if not names:
        raise UsageError(f"--methods expects a comma list of {', '.join(peers)} or all")
    for name in names:
        if name != "all" and name not in peers:
            raise UsageError(f"--methods: unknown method '{name}'; choose from {', '.join(peers)}, or all")
    return [p for p in peers if p in names or "all" in names]


def references(methods, benches, known: dict) -> list[str]:
    """The reference series the chosen methods' differences need."""
    refs = set()
    for name in methods:
        for bench, t in known[name].benchmarks.items():
            if bench not in benches:
                continue
            refs.add(REF_BARRIER)
            if t["start"] == "back_to_back" or t["timing"] == "loop":
                refs.add(REF_B2B)
            if t["root"] == "rotating":
                refs |= {REF_ROTATE, REF_B2B}
            if t["cache"] == "cycling":
                refs.add(REF_CYCLE)
    return [r for r in known if r in refs]


def plan_fields(request, benches, known: dict) -> dict:
    """Validated values for the Plan from a MeasureRequest: the methods asked
    for, the engine's --methods list (with the references), and notes on
    what is left out."""
    text = request.methods
    if text is None:
        return {"methods": None, "method_series": None}
    methods = parse_methods(text, known)
    covered = {b for name in methods for b in known[name].benchmarks if b in benches}
    if not covered:
        measured = sorted({b for name in methods for b in known[name].benchmarks})
        raise UsageError(
            f"--methods {text}: none of the benchmarks asked for ({', '.join(benches)}) "
            f"is one these tools measure ({', '.join(measured)}); add one with --bench"
        )
    notes = []
    for name in methods:
        left = [b for b in benches if b not in known[name].benchmarks]
        if left:
            notes.append(f"{known[name].tool} measures no {', '.join(left)}: --methods {name} leaves it out")
    engine = methods + references(methods, benches, known)
    return {
        "methods": methods,
        "method_engine": engine,
        "method_notes": notes,
        "method_series": {b: sum(b in known[m].benchmarks for m in engine) for b in benches},
    }


def engine_args(plan) -> list[str]:
    engine = getattr(plan, "method_engine", None)
    return ["--methods", ",".join(engine)] if engine else []
