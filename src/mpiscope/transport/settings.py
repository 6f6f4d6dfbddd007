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
from mpiscope.transport.crossovers import Crossover

VADER_MAX_SEND = 32768  # Open MPI's default btl_vader/sm_max_send_size


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


def _words(line):
    return line.split()


def library_settings(t: Thresholds) -> list:
    single = t.cma_ok and t.cma_min is not None
    eager = t.copy_max if single and t.copy_max else None
    out = []
    # Open MPI 4.x
    if single:
        args = ["--mca", "btl_vader_single_copy_mechanism", "cma"]
        if eager:
            args += ["--mca", "btl_vader_eager_limit", str(eager)]
            if eager > VADER_MAX_SEND:
                args += ["--mca", "btl_vader_max_send_size", str(eager)]
        note = (f"messages up to {format_size(eager)} are copied, larger ones pulled with CMA"
                if eager else "CMA wins at every size measured: the default eager limit stays")
    else:
        args = ["--mca", "btl_vader_single_copy_mechanism", "none"]
        note = ("CMA is not available here: " + (t.cma_why or "") if not t.cma_ok
                else "copying wins at every size measured: no single copy")
    out.append(LibrarySettings("Open MPI 4.x (btl vader)", ["mpirun " + " ".join(args)], args, note=note))
    # Open MPI 5.x
    args5 = ["--mca", "smsc", "cma" if single else "^cma"]
    if eager:
        args5 += ["--mca", "btl_sm_eager_limit", str(eager)]
        if eager > VADER_MAX_SEND:
            args5 += ["--mca", "btl_sm_max_send_size", str(eager)]
    out.append(LibrarySettings("Open MPI 5.x (btl sm, smsc)", ["mpirun " + " ".join(args5)], args5, note=note))
    # UCX, for Open MPI's pml ucx and MPICH's ch4:ucx alike
    env = {"UCX_TLS": "posix,cma,self" if single else "posix,self"}
    if single:
        env["UCX_RNDV_THRESH"] = str(t.cma_min)
    out.append(LibrarySettings("UCX (Open MPI pml ucx, MPICH ch4:ucx)",
                               [f"export {k}={v}" for k, v in env.items()], env=env, note=note))
    # MPICH ch4 with its own shared memory (4.1 and later)
    envm = {"MPIR_CVAR_CH4_CMA_ENABLE": "1" if single else "0"}
    if single:
        envm["MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"] = str(t.cma_min)
    out.append(LibrarySettings("MPICH ch4:ofi/posix (4.1+)", [f"export {k}={v}" for k, v in envm.items()],
                               env=envm, note=note))
    # the lab's own hybrid
    def sz(v):
        return "-" if v is None else str(v)

    hy = f"{t.placement}:{sz(t.basic_max or 0)},{sz(t.cma_min if t.cma_ok else None)},{sz(t.cma_min_late)}"
    out.append(LibrarySettings("mpiscope hybrid (transport lab)", [f"export MPISCOPE_TP_THRESHOLDS='{hy}'"],
                               env={"MPISCOPE_TP_THRESHOLDS": hy},
                               note="basic up to BASIC_MAX, cma from CMA_MIN when the receiver waits, "
                                    "from CMA_MIN_LATE when it does not, advanced between"))
    return out


def for_library(settings: list, library: str) -> LibrarySettings | None:
    """The settings that apply to a run's library (its version string)."""
    lib = library or ""
    if "Open MPI" in lib:
        major = lib.split("v", 1)[1][:1] if "v" in lib else "4"
        want = "Open MPI 5" if major >= "5" else "Open MPI 4"
    elif "MPICH" in lib or "mpich" in lib.lower():
        want = "UCX" if "ucx" in lib.lower() else "MPICH"
    else:
        return None
    return next((s for s in settings if s.library.startswith(want)), None)
