# SPDX-License-Identifier: BSD-3-Clause
"""MPICH's intra-node paths for the transport lab (mpilibs/intranode.py):
on UCX (Debian's ch4:ucx) its transports choose the path (UCX_TLS with or
without cma) and the rendezvous threshold where a cma get starts; on its
own shared memory (ch4:ofi/posix, 4.1 on) MPIR_CVAR_CH4_CMA_ENABLE and the
IPC threshold. Either may change the path of any size: no bound."""

from __future__ import annotations

from mpiscope.mpilibs.intranode import COPY, SINGLE, PathFamily, PathRule


class _Variables(PathFamily):
    """A family whose path one variable switches (its values with single copy
    and without), and another sets the size from which single copy starts."""

    switch: tuple  # (rule name, variable, single-copy value, copy value)
    threshold: str

    def rules(self, single_from, copy_max):
        name, variable, single, copy = self.switch
        rules = [PathRule(name, env=((variable, copy if single_from is None else single),))]
        if single_from is not None and copy_max is not None:
            rules.append(PathRule(f"single copy from {single_from}", env=((self.threshold, str(single_from)),)))
        return rules


class Ucx(_Variables):
    name, label = "UCX", "UCX (Open MPI pml ucx, MPICH ch4:ucx)"
    measure_mpi, copy_words = "--mpi mpich", '"-genv UCX_TLS posix,self"'
    switch, threshold = ("transports", "UCX_TLS", "posix,cma,self", "posix,self"), "UCX_RNDV_THRESH"

    def mechanism(self, setting):
        tls = setting("UCX_TLS")
        if tls is None:
            return SINGLE, "defaults (UCX_TLS all)"
        return SINGLE if "cma" in tls or tls in ("all", "sm", "shm") else COPY, f"UCX_TLS={tls}"


class Ch4Shm(_Variables):
    name, label = "MPICH", "MPICH ch4:ofi/posix (4.1+)"
    measure_mpi, copy_words = "--mpicc MPICH/bin/mpicc", '"-genv MPIR_CVAR_CH4_CMA_ENABLE 0"'
    switch = ("cma", "MPIR_CVAR_CH4_CMA_ENABLE", "1", "0")
    threshold = "MPIR_CVAR_CH4_IPC_CMA_P2P_THRESHOLD"

    def mechanism(self, setting):
        v = setting("MPIR_CVAR_CH4_CMA_ENABLE")
        return COPY if v == "0" else SINGLE, f"MPIR_CVAR_CH4_CMA_ENABLE={v}" if v else "defaults"


UCX, CH4_SHM = Ucx(), Ch4Shm()
