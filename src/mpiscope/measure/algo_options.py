# SPDX-License-Identifier: BSD-3-Clause
"""A run's settings of our own collective algorithms (native/engine/colls):
--algo, --segment and --trace, and how many variants each collective then
runs (for the progress total).

`--algo` takes a comma list of algorithm names, `mpi` (the library's own
collective) or `all` (mpi and every algorithm); it applies to the collectives
that have algorithms of our own. A name applies to the collectives that have
an algorithm of that name and must belong to at least one of them. Which
algorithms exist the engine says (`algorithms`: {collective: names}, from
engine/describe.py).
"""

from __future__ import annotations

from mpiscope.common.errors import UsageError
from mpiscope.common.sizes import parse_size_option


def resolve(bench: str, algos, algorithms: dict) -> list[str]:
    """The variants `bench` runs for the --algo names, in order, each once."""
    if bench not in algorithms or not algos:
        return ["mpi"]
    out = []
    for name in algos:
        for v in ["mpi", *algorithms[bench]] if name == "all" else [name]:
            if (v == "mpi" or v in algorithms[bench]) and v not in out:
                out.append(v)
    return out or ["mpi"]


def parse_algos(text, benches, algorithms: dict) -> list[str]:
    """The --algo names, each once; every name must belong to at least one of
    the collectives asked for (a collective none of the names belongs to is
    measured with the library's own algorithm)."""
    names = [x.strip() for x in str(text).split(",") if x.strip()]
    if not names:
        raise UsageError("--algo expects a comma list of algorithm names, mpi or all")
    colls = [b for b in benches if b in algorithms]
    if not colls and any(n != "mpi" for n in names):
        raise UsageError(
            f"--algo applies to {', '.join(algorithms)}; none of the benchmarks "
            f"asked for ({', '.join(benches)}) has algorithms of its own"
        )
    for name in names:
        if name in ("all", "mpi") or any(name in algorithms[b] for b in colls):
            continue
        valid = "; ".join(f"{b}: {', '.join(algorithms[b])}" for b in colls)
        raise UsageError(
            f"--algo {name}: no benchmark asked for has an algorithm '{name}'; valid: mpi, all, or for {valid}"
        )
    return list(dict.fromkeys(names))


def plan_fields(request, benches, algorithms: dict) -> dict:
    """Validated values for the Plan from a MeasureRequest: the --algo names,
    segment, trace, and the variants each collective asked for runs."""
    text = request.algo
    algos = parse_algos(text, benches, algorithms) if text is not None else None
    seg = request.segment
    segment = parse_size_option("--segment", seg, minimum=1) if seg is not None else None
    trace = bool(request.trace)
    algo_variants = {b: resolve(b, algos, algorithms) for b in benches if b in algorithms}
    if trace and not any(v != "mpi" for vs in algo_variants.values() for v in vs):
        raise UsageError(
            "--trace records the messages of our own algorithms: choose some with "
            "--algo (e.g. --algo ring or --algo all)"
        )
    return {"algos": algos, "segment": segment, "trace": trace, "algo_variants": algo_variants if algos else None}


def engine_args(plan) -> list[str]:
    out = []
    if getattr(plan, "algos", None):
        out += ["--algo", ",".join(plan.algos)]
    if getattr(plan, "segment", None):
        out += ["--segment", str(plan.segment)]
    if getattr(plan, "trace", False):
        out.append("--trace")
    return out


def variant_counts(plan) -> dict:
    """{bench: number of variants} of the collectives --algo multiplies."""
    return {b: len(v) for b, v in (getattr(plan, "algo_variants", None) or {}).items()}
