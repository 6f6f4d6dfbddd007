# SPDX-License-Identifier: BSD-3-Clause
"""What the engine says it measures: `mpiscope-engine --describe`, read once
per build and cached beside the engine binary.

The engine is the single source of truth for its benchmarks (pattern,
sample rule, unit, minimum ranks, sizeless, variants) and for its own
collective algorithms; nothing here lists them again.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from mpiscope.common.atomic import write_text

CACHE_NAME = "describe.json"


@dataclass(frozen=True)
class Benchmark:
    name: str
    pattern: str
    rule: str
    unit: str
    min_ranks: int
    sizeless: bool
    pairing: str
    collective: bool
    variants: tuple
    variant_option: str | None


@dataclass(frozen=True)
class Method:
    """A peer's measurement method (`run --methods`), or a reference series
    of the attribution; `benchmarks`: benchmark -> how the method times it
    (timing, start, root, cache, ranks: native/engine/methods/method.h)."""

    name: str
    tool: str
    reference: bool
    benchmarks: dict


@dataclass(frozen=True)
class Description:
    benchmarks: dict  # name -> Benchmark, in the engine's registry order
    algorithms: dict  # collective benchmark -> (names of our own algorithms…), registry order
    rules: dict  # sample rule -> what one sample is
    raw_schema_version: int
    methods: dict = field(default_factory=dict)  # name -> Method, in the engine's registry order

    def names(self) -> list[str]:
        return list(self.benchmarks)


def parse(doc: dict) -> Description:
    benches = {}
    for b in doc["benchmarks"]:
        benches[b["name"]] = Benchmark(
            b["name"],
            b["pattern"],
            b["rule"],
            b["unit"],
            int(b["min_ranks"]),
            bool(b["sizeless"]),
            b["pairing"],
            bool(b["collective"]),
            tuple(b.get("variants") or ("mpi",)),
            b.get("variant_option"),
        )
    algos = {c["bench"]: tuple(a["name"] for a in c["algorithms"]) for c in doc.get("collectives", [])}
    methods = {
        m["name"]: Method(m["name"], m["tool"], bool(m["reference"]), dict(m["benchmarks"]))
        for m in doc.get("methods", [])
    }
    return Description(benches, algos, dict(doc.get("rules", {})), int(doc["raw_schema_version"]), methods)


def _key(engine: Path) -> dict:
    st = engine.stat()
    return {"engine": str(engine), "mtime_ns": st.st_mtime_ns, "size": st.st_size}


def describe_engine(engine) -> Description:
    """The description of the engine binary `engine`, from its cache when the
    binary is the one the cache was made from."""
    engine = Path(engine)
    cache = engine.with_name(CACHE_NAME)
    key = _key(engine)
    try:
        cached = json.loads(cache.read_text())
        if cached.get("key") == key:
            return parse(cached["describe"])
    except (OSError, ValueError, KeyError):
        pass  # no cache yet, or a stale or damaged one: ask the engine
    p = subprocess.run([str(engine), "--describe"], capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise RuntimeError(f"{engine} --describe failed (exit {p.returncode}): {p.stderr.strip()}")
    doc = json.loads(p.stdout)
    write_text(cache, json.dumps({"key": key, "describe": doc}, indent=1) + "\n")
    return parse(doc)


def describe(mpi="openmpi") -> Description:
    """The description of the engine built for `mpi`, an Installation (engine/mpi.py) or
    the --mpi shorthand openmpi | mpich (built first when needed)."""
    from mpiscope.engine.build import ensure_engine

    return describe_engine(ensure_engine(mpi))
