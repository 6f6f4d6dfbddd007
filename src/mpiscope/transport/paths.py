"""MPI libraries' own intra-node paths, measured by ordinary pingpong and bw
runs whose launcher options or environment choose the mechanism (recorded
in the run's context): Open MPI's vader/sm with single copy by CMA or none,
UCX (Open MPI's pml ucx, MPICH's ch4:ucx) with or without its cma transport.

A family measured both ways gives the library's own crossover, which is
what its settings should follow: its copy path is not the lab's (Open MPI's
copy-only path pipelines 32 KiB fragments through one FIFO, far slower than
the lab's ring for large messages)."""

from __future__ import annotations

from mpiscope import mpilibs

COPY, SINGLE = "copy", "single copy"


def family(library: str) -> str | None:
    """The path family of a library's MPI_Get_library_version text (its library says)."""
    lib = mpilibs.from_library_text(library or "")
    return lib.path_family(library) if lib else None


def _setting(words: list, env: dict, name: str) -> str | None:
    """A variable or MCA parameter's value in launcher words (--mca k v, -x k=v,
    -genv k v, -env k v) or in the environment."""
    for i, w in enumerate(words):
        if w in ("--mca", "-mca") and i + 2 < len(words) and words[i + 1] == name:
            return words[i + 2]
        if w == "-x" and i + 1 < len(words) and words[i + 1].startswith(name + "="):
            return words[i + 1].split("=", 1)[1]
        if w in ("-genv", "-env") and i + 2 < len(words) and words[i + 1] == name:
            return words[i + 2]
    return env.get(name) or env.get("OMPI_MCA_" + name)


def mechanism(run) -> tuple:
    """(family, COPY | SINGLE, what chose it) of a run's library path; family None
    when the library is not one we know."""
    fam = family(run.context.get("mpi_library") or run.library)
    words = list((run.plan or {}).get("launcher_args") or [])
    env = run.context.get("env") or {}
    if fam in ("Open MPI 4", "Open MPI 5"):
        v = _setting(words, env, "btl_vader_single_copy_mechanism") or _setting(words, env, "btl_sm_single_copy_mechanism")
        s = _setting(words, env, "smsc")
        if v is not None:
            return fam, COPY if v == "none" else SINGLE, f"single_copy_mechanism {v}"
        if s is not None:
            return fam, COPY if s.startswith("^") or s == "none" else SINGLE, f"smsc {s}"
        return fam, SINGLE, "defaults (cma where it works)"
    tls = _setting(words, env, "UCX_TLS")
    if fam == "UCX":
        if tls is None:
            return fam, SINGLE, "defaults (UCX_TLS all)"
        return fam, SINGLE if "cma" in tls or tls in ("all", "sm", "shm") else COPY, f"UCX_TLS={tls}"
    if fam == "MPICH":
        v = _setting(words, env, "MPIR_CVAR_CH4_CMA_ENABLE")
        return fam, COPY if v == "0" else SINGLE, f"MPIR_CVAR_CH4_CMA_ENABLE={v}" if v else "defaults"
    return fam, None, ""
