# SPDX-License-Identifier: BSD-3-Clause
"""The settings that follow from the crossovers, per MPI library, as the lines a
user adds: where single copy (CMA) starts to beat copying through shared memory,
and whether it wins at all. Each library's path families say which settings
those are (mpilibs/intranode.py); mpiscope's hybrid takes MPISCOPE_TP_THRESHOLDS.

The threshold is the warm-buffer bandwidth crossover (tp_bw): benchmarks and
most applications reuse their buffers (cold, single copy wins earlier). A
library's settings are rules, each with the sizes whose path it changes, so that
`advise --verify` can withdraw the rule behind a size made slower."""

from __future__ import annotations

from dataclasses import dataclass, field

from mpiscope import mpilibs
from mpiscope.common.sizes import format_size
from mpiscope.stats.compare import FASTER
from mpiscope.transport.crossovers import crossover
from mpiscope.transport.paths import family


@dataclass
class Thresholds:
    placement: str
    cma_ok: bool
    cma_why: str | None  # why cma did not run, when it did not
    copy_max: int | None  # the largest size a copy still wins at (warm)
    cma_min: int | None  # single copy wins from here on (warm); None: never
    cma_min_cold: int | None
    cma_min_late: int | None  # with a late receiver (tp_skew); None: never
    basic_max: int | None  # the ring (basic) keeps every size up to here from the pool (advanced); None: every size


@dataclass(frozen=True)
class Rule:
    """One setting: its launcher words or variables, and the message sizes
    whose path it changes, (low, high] in bytes (high None: no bound)."""

    name: str
    launcher_args: tuple = ()
    env: tuple = ()  # ((variable, value), ...)
    low: int = 0
    high: int | None = None

    def covers(self, size) -> bool:
        return size > self.low and (self.high is None or size <= self.high)

    def to_dict(self):
        return {
            "name": self.name,
            "launcher_args": list(self.launcher_args),
            "env": dict(self.env),
            "low": self.low,
            "high": self.high,
        }


@dataclass
class LibrarySettings:
    library: str  # its heading: the path family's label
    lines: list  # what a user adds, one line each
    launcher_args: list = field(default_factory=list)  # words for mpirun (Open MPI)
    env: dict = field(default_factory=dict)  # variables (UCX, MPICH)
    note: str = ""
    measured: bool = False  # from the library's own paths, not the lab's designs
    rules: list = field(default_factory=list)  # Rule: what launcher_args and env are made of
    family: str | None = None  # its path family's name (mpilibs: path_family)

    def to_dict(self):
        return {**vars(self), "rules": [r.to_dict() for r in self.rules]}


def from_rules(
    library: str, rules: list, note: str = "", measured: bool = True, family: str | None = None
) -> LibrarySettings:
    """Settings made of `rules`: launcher words as one mpirun line, variables
    as export lines; no rule: the defaults."""
    args = [w for r in rules for w in r.launcher_args]
    env = {k: v for r in rules for k, v in r.env}
    lines = (["mpirun " + " ".join(args)] if args else []) + [f"export {k}={v}" for k, v in env.items()]
    return LibrarySettings(
        library,
        lines or ["# keep the defaults"],
        args,
        env,
        note=note,
        measured=measured,
        rules=list(rules),
        family=family,
    )


def withdraw(rules: list, slower_sizes) -> list:
    """The rules to withdraw after a verification found the settings slower
    at `slower_sizes`: per size, of the rules whose sizes cover it the most
    specific (the narrowest range; all of equal width), since it is the one
    that changes the least else; a slower size no rule covers (the settings
    as a whole did it): all of them. What remains is verified again, so a
    wrong guess costs a pass, never a slower setting."""

    def width(r):
        return float("inf") if r.high is None else r.high - r.low

    out = []
    for size in slower_sizes:
        cover = [r for r in rules if r.covers(size)]
        narrow = min(map(width, cover), default=None)
        out += [r for r in cover if width(r) == narrow] or rules
    return [r for r in rules if r in out]


def thresholds(placement, xs: list, cma_why=None) -> Thresholds:
    def find(state, challenger):
        return next(
            (x for x in xs if x.placement == placement and x.state == state and x.challenger == challenger), None
        )

    warm, cold, late = find("warm", "cma"), find("cold", "cma"), find("late receiver", "cma")
    cma_min = warm.size if warm else None
    return Thresholds(
        placement,
        cma_ok=warm is not None,
        cma_why=cma_why,
        copy_max=warm.last_loss if warm else None,
        cma_min=cma_min,
        cma_min_cold=cold.size if cold else None,
        cma_min_late=late.size if late else None,
        basic_max=_basic_max(find("warm", "advanced"), cma_min),
    )


def _basic_max(pool, cma_min):
    """The largest size the ring (basic) keeps from the pool (advanced): where
    the pool wins at every size from there up to where a single copy takes
    over (the sizes above are cma's, whoever wins them among the copies: a
    tie there, at a size cma takes, would otherwise leave the ring every size
    below it). None: the ring takes every size (the pool never wins, or was
    not measured)."""
    if pool is None:
        return None
    wins = {s: v == FASTER for s, v in pool.verdicts.items() if cma_min is None or s < cma_min}
    first, last = crossover(sorted(wins), wins)
    return None if first is None else (last or 0)


@dataclass
class Basis:
    """Where a family's single-copy threshold comes from."""

    measured: bool  # the library's own paths, both ways (paths.py); else the lab's designs
    single_from: int | None  # single copy wins from here on; None: never
    copy_max: int | None  # the largest size a copy still wins at
    text: str


def basis_of(t: Thresholds, fam: str, lib_crossover=None) -> Basis:
    if lib_crossover is not None:
        first, last = lib_crossover
        return Basis(True, first, last, f"measured: {fam}'s own paths, single copy against copy (bw)")
    if not t.cma_ok:
        return Basis(False, None, None, "CMA is not available here: " + (t.cma_why or "?"))
    return Basis(
        False,
        t.cma_min,
        t.copy_max,
        "from the lab's designs, not the library's own paths, whose copy may be slower than the lab's ring",
    )


def _note(b: Basis) -> str:
    if b.single_from is None:
        what = "copying wins at every size measured: no single copy"
    elif b.copy_max is None:
        what = "single copy wins at every size measured: the defaults stay"
    else:
        what = f"copy up to {format_size(b.copy_max)}, single copy from {format_size(b.single_from)}"
    return f"{what} ({b.text})"


def _unmeasured(fam, b: Basis) -> LibrarySettings:
    """No lines to add: the library's defaults stay until its own paths are
    measured; how to measure them, and what the lab's designs suggest."""
    run = f"mpiscope run -n 2 {fam.measure_mpi} --bench pingpong,bw --sizes 1K-16M:x4"
    tag = fam.name.lower().replace(" ", "")
    return LibrarySettings(
        fam.label,
        [
            "# keep the defaults; to tune, measure its two paths and pass both runs to advise:",
            f"#   {run} --label {tag}-single",
            f"#   {run} --launcher-args {fam.copy_words} --label {tag}-copy",
        ],
        note="the lab's designs say: " + _note(b),
        measured=False,
        family=fam.name,
    )


def library_settings(t: Thresholds, lib_crossovers=None) -> list:
    """Settings per library path family; `lib_crossovers`: {family: (first,
    last_loss)} of the families whose own paths were measured both ways. A
    family not so measured keeps its defaults: the lab's copy path is not the
    library's."""
    lib_crossovers = lib_crossovers or {}
    out = []
    for fam in mpilibs.path_families():
        b = basis_of(t, fam.name, lib_crossovers.get(fam.name))
        if not b.measured:
            out.append(_unmeasured(fam, b))
        else:
            rules = [Rule(r.name, r.launcher_args, r.env, r.low, r.high) for r in fam.rules(b.single_from, b.copy_max)]
            out.append(from_rules(fam.label, rules, note=_note(b), family=fam.name))

    def sz(v):
        return "-" if v is None else str(v)

    hy = f"{t.placement}:{sz(t.basic_max)},{sz(t.cma_min if t.cma_ok else None)},{sz(t.cma_min_late)}"
    out.append(
        LibrarySettings(
            "mpiscope hybrid (transport lab)",
            [f"export MPISCOPE_TP_THRESHOLDS='{hy}'"],
            env={"MPISCOPE_TP_THRESHOLDS": hy},
            measured=True,
            rules=[Rule("thresholds", env=(("MPISCOPE_TP_THRESHOLDS", hy),))],
            note="basic up to BASIC_MAX, cma from CMA_MIN when the receiver waits, "
            "from CMA_MIN_LATE when it does not, advanced between",
        )
    )
    return out


def for_library(settings: list, library: str) -> LibrarySettings | None:
    """The settings that apply to a run's library (its version string)."""
    want = family(library)
    return next((s for s in settings if s.family == want), None) if want else None
