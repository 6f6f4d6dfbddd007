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
single copy wins earlier (the crossover table says by how much)."""

from __future__ import annotations

from dataclasses import dataclass, field

from mpiscope.common.sizes import format_size
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
    basic_max: int | None     # the ring (basic) wins up to here against the pool (advanced)


@dataclass
class LibrarySettings:
    library: str
    lines: list                              # what a user adds, one line each
    launcher_args: list = field(default_factory=list)  # words for mpirun (Open MPI)
    env: dict = field(default_factory=dict)  # variables (UCX, MPICH)
    note: str = ""
    measured: bool = False                   # from the library's own paths, not the lab's designs

    def to_dict(self):
        return dict(vars(self))


def thresholds(placement, xs: list, cma_why=None) -> Thresholds:
    def find(state, challenger):
        return next((x for x in xs if x.placement == placement and x.state == state
                     and x.challenger == challenger), None)

    warm, cold, late = find("warm", "cma"), find("cold", "cma"), find("late receiver", "cma")
    pool = find("warm", "advanced")
    return Thresholds(placement, cma_ok=warm is not None, cma_why=cma_why,
                      copy_max=warm.last_loss if warm else None,
                      cma_min=warm.size if warm else None,
                      cma_min_cold=cold.size if cold else None,
                      cma_min_late=late.size if late else None,
                      basic_max=(pool.last_loss if pool and pool.size else None))


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
    if b.single_from is None:
        return ["--mca", "smsc", "^cma"] if five else ["--mca", "btl_vader_single_copy_mechanism", "none"]
    args = ["--mca", "smsc", "cma"] if five else ["--mca", "btl_vader_single_copy_mechanism", "cma"]
    btl = "btl_sm" if five else "btl_vader"
    if b.copy_max and b.copy_max > OMPI_EAGER:
        args += ["--mca", f"{btl}_eager_limit", str(b.copy_max)]
        if b.copy_max > VADER_MAX_SEND:
            args += ["--mca", f"{btl}_max_send_size", str(b.copy_max)]
    return args


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
            args = _openmpi(b, fam.endswith("5"))
            out.append(LibrarySettings(label, ["mpirun " + " ".join(args)], args, note=_note(b), measured=True))
        else:
            ucx = fam == "UCX"
            env = ({"UCX_TLS": "posix,cma,self" if b.single_from is not None else "posix,self"} if ucx else
                   {"MPIR_CVAR_CH4_CMA_ENABLE": "1" if b.single_from is not None else "0"})
            if b.single_from is not None and b.copy_max is not None:
                env["UCX_RNDV_THRESH" if ucx else "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"] = str(b.single_from)
            out.append(LibrarySettings(label, [f"export {k}={v}" for k, v in env.items()], env=env, note=_note(b),
                                       measured=True))

    def sz(v):
        return "-" if v is None else str(v)

    hy = f"{t.placement}:{sz(t.basic_max or 0)},{sz(t.cma_min if t.cma_ok else None)},{sz(t.cma_min_late)}"
    out.append(LibrarySettings("mpiscope hybrid (transport lab)", [f"export MPISCOPE_TP_THRESHOLDS='{hy}'"],
                               env={"MPISCOPE_TP_THRESHOLDS": hy}, measured=True,
                               note="basic up to BASIC_MAX, cma from CMA_MIN when the receiver waits, "
                                    "from CMA_MIN_LATE when it does not, advanced between"))
    return out


def for_library(settings: list, library: str) -> LibrarySettings | None:
    """The settings that apply to a run's library (its version string)."""
    want = family(library)
    return next((s for s in settings if s.library.startswith(want)), None) if want else None
