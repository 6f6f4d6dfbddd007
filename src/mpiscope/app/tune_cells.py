# SPDX-License-Identifier: BSD-3-Clause
"""A tune's directory as the application's prediction and the what-if at
scale read it (tune.json, docs/schemas/tune.schema.json): every verified
cell (collective × communicator size × size) with its speedup default/tuned
and 95% interval, the rules per communicator size, and what the library's
default was read to run at each cell (where a debugger could tell)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.selection import Rule
from mpiscope.tune.result_file import read as read_result


@dataclass(frozen=True)
class VerifiedCell:
    collective: str
    p: int
    size: int  # the engine's size (the tune's grid)
    rule: str  # the rule's algorithm at the cell, or "default"
    speedup: float | None  # default/tuned; None: not measured
    low: float | None
    high: float | None
    verdict: str


@dataclass(frozen=True)
class TuneCells:
    directory: Path
    library: str
    ps: tuple
    cells: tuple
    rules: dict  # {coll: {p: [Rule]}}, library sizes
    default_runs: dict  # {(coll, p, size): the library algorithm its default runs}

    def verified(self, coll: str, p: int) -> list:
        """The cells of `coll` at communicator size p with a speedup, by size."""
        return sorted((c for c in self.cells if c.collective == coll and c.p == p and c.speedup), key=lambda c: c.size)


def read_tune(directory) -> TuneCells:
    directory = Path(directory)
    path = directory / "tune.json" if directory.is_dir() else directory
    doc = read_result(path)
    try:
        cells = tuple(
            VerifiedCell(
                r["collective"],
                int(r.get("p", doc["p"])),
                int(r["size"]),
                r["rule"],
                r.get("speedup"),
                r.get("speedup_low"),
                r.get("speedup_high"),
                r.get("verdict", "not measured"),
            )
            for r in doc["verification"]["cells"]
        )
        rules = {
            c: {int(p): [Rule(int(x["start"]), x["algorithm"]) for x in rs] for p, rs in by_p.items()}
            for c, by_p in doc["rules"].items()
        }
        runs = {(r["collective"], int(r["p"]), int(r["size"])): r["algorithm"] for r in doc.get("default_runs", [])}
        return TuneCells(
            path.parent, doc["library"], tuple(int(p) for p in doc.get("ps", [doc["p"]])), cells, rules, runs
        )
    except (ValueError, KeyError, TypeError) as e:
        raise UsageError(
            f"{path} is not a tune's tune.json ({e}); give the output directory of `mpiscope tune`"
        ) from None
