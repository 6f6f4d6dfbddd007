"""The settings that follow from the crossovers, per MPI library, as the
lines a user adds: where single copy (CMA) starts to beat copying through
shared memory, and whether it wins at all.

  Open MPI 4.x (btl vader)   single-copy mechanism; eager limit (the largest
                             size still copied), max send size to match
  Open MPI 5.x (btl sm)      smsc cma or none; eager limit
  UCX (Open MPI's pml ucx,   UCX_TLS with or without cma; UCX_RNDV_THRESH
  MPICH ch4:ucx)             (rendezvous, hence a cma get, from this size)
  MPICH ch4 (posix shm)      MPIR_CVAR_CH4_CMA_ENABLE, MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD
  mpiscope's hybrid          MPISCOPE_TP_THRESHOLDS for the transport lab itself

The threshold is the warm-buffer bandwidth crossover (tp_bw): MPI
benchmarks and most applications reuse their buffers. With cold buffers
single copy wins earlier (the crossover table says by how much).

A library's settings are rules, each with the sizes whose path it changes,
so that `advise --verify` can withdraw the rule behind a size the settings
made slower (withdraw) and keep the others."""

from __future__ import annotations

from dataclasses import dataclass, field

from mpiscope.common.sizes import format_size
from mpiscope.stats.compare import FASTER
from mpiscope.transport.crossovers import crossover
from mpiscope.transport.paths import family

VADER_MAX_SEND = 32768  # Open MPI's default btl_vader/sm_max_send_size
OMPI_EAGER = 4096       # and its default eager limit


@dataclass
class Thresholds:
    placement: str
    cma_ok: bool
    cma_why: str | None       # why cma did not run, when it did not
    copy_max: int | None      # the largest size a copy still wins at (warm)
    cma_min: int | None       # single copy wins from here on (warm); None: never
    cma_min_cold: int | None
    cma_min_late: int | None  # with a late receiver (tp_skew); None: never
    basic_max: int | None     # the ring (basic) keeps every size up to here from the pool (advanced); None: every size


@dataclass(frozen=True)
class Rule:
    """One setting: its launcher words or variables, and the message sizes
    whose path it changes, (low, high] in bytes (high None: no bound)."""
    name: str
    launcher_args: tuple = ()
    env: tuple = ()          # ((variable, value), ...)
    low: int = 0
    high: int | None = None

    def covers(self, size) -> bool:
        return size > self.low and (self.high is None or size <= self.high)

    def to_dict(self):
        return {"name": self.name, "launcher_args": list(self.launcher_args), "env": dict(self.env),
                "low": self.low, "high": self.high}


@dataclass
class LibrarySettings:
    library: str
    lines: list                              # what a user adds, one line each
    launcher_args: list = field(default_factory=list)  # words for mpirun (Open MPI)
    env: dict = field(default_factory=dict)  # variables (UCX, MPICH)
    note: str = ""
    measured: bool = False                   # from the library's own paths, not the lab's designs
    rules: list = field(default_factory=list)  # Rule: what launcher_args and env are made of

    def to_dict(self):
        return {**vars(self), "rules": [r.to_dict() for r in self.rules]}


def from_rules(library: str, rules: list, note: str = "", measured: bool = True) -> LibrarySettings:
    """Settings made of `rules`: Open MPI's as one mpirun line, variables as
    export lines; no rule: the defaults."""
    args = [w for r in rules for w in r.launcher_args]
    env = {k: v for r in rules for k, v in r.env}
    lines = (["mpirun " + " ".join(args)] if args else []) + [f"export {k}={v}" for k, v in env.items()]
    return LibrarySettings(library, lines or ["# keep the defaults"], args, env, note=note, measured=measured,
                           rules=list(rules))


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
        return next((x for x in xs if x.placement == placement and x.state == state
                     and x.challenger == challenger), None)

    warm, cold, late = find("warm", "cma"), find("cold", "cma"), find("late receiver", "cma")
    cma_min = warm.size if warm else None
    return Thresholds(placement, cma_ok=warm is not None, cma_why=cma_why,
                      copy_max=warm.last_loss if warm else None,
                      cma_min=cma_min,
                      cma_min_cold=cold.size if cold else None,
                      cma_min_late=late.size if late else None,
                      basic_max=_basic_max(find("warm", "advanced"), cma_min))


def _basic_max(pool, cma_min):
    """The largest size the ring (basic) keeps from the pool (advanced): where
    the pool wins at every size from there up to where a single copy takes
    over (the sizes above are cma's, whoever wins them among the copies: the
    lab measured the pool 7x faster than the ring at 1 MiB while a tie at
    16 MiB left the ring every size below cma's 4 MiB). None: the ring takes
    every size (the pool never wins, or was not measured)."""
    if pool is None:
        return None
    wins = {s: v == FASTER for s, v in pool.verdicts.items() if cma_min is None or s < cma_min}
    first, last = crossover(sorted(wins), wins)
    return None if first is None else (last or 0)


@dataclass
class Basis:
    """Where a family's single-copy threshold comes from."""
    measured: bool             # the library's own paths, both ways (paths.py); else the lab's designs
    single_from: int | None    # single copy wins from here on; None: never
    copy_max: int | None       # the largest size a copy still wins at
    text: str


def basis_of(t: Thresholds, fam: str, lib_crossover=None) -> Basis:
    if lib_crossover is not None:
        first, last = lib_crossover
        return Basis(True, first, last, f"measured: {fam}'s own paths, single copy against copy (bw)")
    if not t.cma_ok:
        return Basis(False, None, None, "CMA is not available here: " + (t.cma_why or "?"))
    return Basis(False, t.cma_min, t.copy_max,
                 "from the lab's designs, not the library's own paths, whose copy may be slower than the lab's ring")


def _note(b: Basis) -> str:
    if b.single_from is None:
        what = "copying wins at every size measured: no single copy"
    elif b.copy_max is None:
        what = "single copy wins at every size measured: the defaults stay"
    else:
        what = f"copy up to {format_size(b.copy_max)}, single copy from {format_size(b.single_from)}"
    return f"{what} ({b.text})"


def _openmpi(b: Basis, five: bool) -> list:
    """Rules: the single-copy mechanism changes the path of every message
    beyond the eager limit; raising the eager limit, the sizes up to the new
    one (the fragment size to match rides with it)."""
    if b.single_from is None:
        off = ("--mca", "smsc", "^cma") if five else ("--mca", "btl_vader_single_copy_mechanism", "none")
        return [Rule("no single copy", off, low=OMPI_EAGER)]
    on = ("--mca", "smsc", "cma") if five else ("--mca", "btl_vader_single_copy_mechanism", "cma")
    rules = [Rule("single copy by cma", on, low=OMPI_EAGER)]
    btl = "btl_sm" if five else "btl_vader"
    if b.copy_max and b.copy_max > OMPI_EAGER:
        args = ("--mca", f"{btl}_eager_limit", str(b.copy_max))
        if b.copy_max > VADER_MAX_SEND:
            args += ("--mca", f"{btl}_max_send_size", str(b.copy_max))
        rules.append(Rule(f"eager limit {b.copy_max}", args, low=OMPI_EAGER, high=b.copy_max))
    return rules


# How to measure a family's own two paths (what `advise` needs to tune it).
MEASURE = {
    "Open MPI 4": ("--mpi openmpi", '"--mca btl_vader_single_copy_mechanism none"'),
    "Open MPI 5": ("--mpicc OPENMPI5/bin/mpicc", '"--mca smsc ^cma"'),
    "UCX": ("--mpi mpich", '"-genv UCX_TLS posix,self"'),
    "MPICH": ("--mpicc MPICH/bin/mpicc", '"-genv MPIR_CVAR_CH4_CMA_ENABLE 0"'),
}


def _unmeasured(label, fam, b: Basis) -> LibrarySettings:
    """No lines to add: the library's defaults stay until its own paths are
    measured; how to measure them, and what the lab's designs suggest."""
    mpi, copy = MEASURE[fam]
    run = f"mpiscope run -n 2 {mpi} --bench pingpong,bw --sizes 1K-16M:x4"
    return LibrarySettings(label, [f"# keep the defaults; to tune, measure its two paths and pass both runs to advise:",
                                   f"#   {run} --label {fam.lower().replace(' ', '')}-single",
                                   f"#   {run} --launcher-args {copy} --label {fam.lower().replace(' ', '')}-copy"],
                           note="the lab's designs say: " + _note(b), measured=False)


def library_settings(t: Thresholds, lib_crossovers=None) -> list:
    """Settings per library; `lib_crossovers`: {family: (first, last_loss)} of
    the families whose own paths were measured both ways. A family not so
    measured keeps its defaults: the lab's copy path is not the library's."""
    lib_crossovers = lib_crossovers or {}
    out = []
    for fam, label in (("Open MPI 4", "Open MPI 4.x (btl vader)"), ("Open MPI 5", "Open MPI 5.x (btl sm, smsc)"),
                       ("UCX", "UCX (Open MPI pml ucx, MPICH ch4:ucx)"), ("MPICH", "MPICH ch4:ofi/posix (4.1+)")):
        b = basis_of(t, fam, lib_crossovers.get(fam))
        if not b.measured:
            out.append(_unmeasured(label, fam, b))
        elif fam.startswith("Open MPI"):
            out.append(from_rules(label, _openmpi(b, fam.endswith("5")), note=_note(b)))
        else:
            # the transports and the rendezvous threshold may change the path
            # of any size (UCX's own thresholds are "auto"): no bound
            ucx = fam == "UCX"
            env = (("UCX_TLS", "posix,cma,self" if b.single_from is not None else "posix,self") if ucx else
                   ("MPIR_CVAR_CH4_CMA_ENABLE", "1" if b.single_from is not None else "0"))
            rules = [Rule("transports" if ucx else "cma", env=(env,))]
            if b.single_from is not None and b.copy_max is not None:
                name = "UCX_RNDV_THRESH" if ucx else "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"
                rules.append(Rule(f"single copy from {b.single_from}", env=((name, str(b.single_from)),)))
            out.append(from_rules(label, rules, note=_note(b)))

    def sz(v):
        return "-" if v is None else str(v)

    hy = f"{t.placement}:{sz(t.basic_max)},{sz(t.cma_min if t.cma_ok else None)},{sz(t.cma_min_late)}"
    out.append(LibrarySettings("mpiscope hybrid (transport lab)", [f"export MPISCOPE_TP_THRESHOLDS='{hy}'"],
                               env={"MPISCOPE_TP_THRESHOLDS": hy}, measured=True,
                               rules=[Rule("thresholds", env=(("MPISCOPE_TP_THRESHOLDS", hy),))],
                               note="basic up to BASIC_MAX, cma from CMA_MIN when the receiver waits, "
                                    "from CMA_MIN_LATE when it does not, advanced between"))
    return out


def for_library(settings: list, library: str) -> LibrarySettings | None:
    """The settings that apply to a run's library (its version string)."""
    want = family(library)
    return next((s for s in settings if s.library.startswith(want)), None) if want else None
