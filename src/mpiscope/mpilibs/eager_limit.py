# SPDX-License-Identifier: BSD-3-Clause
"""The MPI library's eager limit on the transport a traced application's
ranks used, for the what-if: a larger message goes by rendezvous (the
simulator's S). Open MPI's ob1 sends eagerly what fits in its transport's
eager limit with ob1's match header: btl tcp between hosts, vader (4.x) or
sm (5.x) within one; an MCA setting in the launch command or the environment
wins. MPICH ch4:ucx sends eagerly below UCX's rendezvous threshold
(mpich/ucx_rndv.py). Where the limit is not known (another library, device or
PML, a transport other than TCP between hosts, no ucx_info), every message
stays eager, and it says so."""

from __future__ import annotations

import math
import subprocess
from dataclasses import dataclass

from mpiscope.mpilibs.launch_settings import launch_setting, mca
from mpiscope.mpilibs.mpich.ucx_rndv import launch_ucx_env, memunits, rndv_from, ucx_info_report
from mpiscope.mpilibs.openmpi.paths import OMPI_EAGER

OB1_MATCH_HEADER = 16  # bytes of ob1's match header, sent within the eager limit
TCP_EAGER = 65536  # btl_tcp_eager_limit's default
ALL_EAGER = math.inf


@dataclass(frozen=True)
class EagerLimit:
    bytes: float  # the largest message sent eagerly; inf: every message
    source: str  # where it comes from, in words


def _mca(context: dict, name: str) -> str | None:
    """An MCA parameter's value from the launch command or OMPI_MCA_NAME."""
    argvs = context.get("launch_commands") or [context.get("launch_command") or []]
    for argv in argvs:
        words = [str(w) for w in argv or []]
        value = mca(lambda n: launch_setting(words, {}, n), name)
        if value is not None:
            return value
    return (context.get("env") or {}).get("OMPI_MCA_" + name)


def _usable(btls: str | None, name: str) -> bool:
    """Whether an Open MPI `btl` selection ("a,b" or "^a,b") lets component `name` run."""
    if not btls:
        return True
    listed = name in btls.lstrip("^").split(",")
    return not listed if btls.startswith("^") else listed


def _open_mpi(context: dict) -> EagerLimit:
    pml = _mca(context, "pml")
    if pml and not pml.startswith("^") and "ob1" not in pml.split(","):
        return EagerLimit(ALL_EAGER, f"not known for Open MPI's pml {pml}: every message eager")
    btls = _mca(context, "btl")
    shared = "sm" if str(context.get("mpi_library") or "").startswith("Open MPI v5") else "vader"
    choices = [("tcp", TCP_EAGER)]
    if int(context.get("nodes") or 1) <= 1:
        choices.insert(0, (shared, OMPI_EAGER))
    usable = [c for c in choices if _usable(btls, c[0])]
    if not usable:
        return EagerLimit(ALL_EAGER, f"not known for Open MPI's btl {btls}: every message eager")
    btl, default = usable[0]
    setting = _mca(context, f"btl_{btl}_eager_limit")
    limit = int(setting) if setting and setting.isdigit() else default
    how = "as set" if setting else "by default"
    where = f"Open MPI's btl_{btl}_eager_limit, {limit} {how}, less ob1's {OB1_MATCH_HEADER} B match header"
    return EagerLimit(float(limit - OB1_MATCH_HEADER), where)


def _ucx_limit(rndv: float, how: str) -> EagerLimit:
    if math.isinf(rndv):
        return EagerLimit(ALL_EAGER, f"{how}: every message eager")
    return EagerLimit(rndv - 1, f"{how}: rendezvous from {int(rndv)} B")


def _mpich_ucx(context: dict, run) -> EagerLimit:
    ucx_env = launch_ucx_env(context)
    setting = ucx_env.get("UCX_RNDV_THRESH", "auto")
    explicit = memunits(setting)
    if explicit is not None:
        return _ucx_limit(explicit, f"MPICH ch4:ucx, UCX_RNDV_THRESH={setting} as set")
    placement = "inter" if int(context.get("nodes") or 1) > 1 else "intra"
    report = ucx_info_report(placement, ucx_env, run)
    rndv = rndv_from(report) if report else None
    if rndv is None:
        return EagerLimit(
            ALL_EAGER, "not known for MPICH ch4:ucx without ucx_info (UCX decides it): every message eager"
        )
    peer = "another host" if placement == "inter" else "the same host"
    return _ucx_limit(rndv, f"MPICH ch4:ucx, UCX's tag_send to {peer} as ucx_info -e reports it here")


def eager_limit(context: dict, run=subprocess.run) -> EagerLimit:
    """The eager limit of the traced run whose context.json is `context`
    (`run` runs ucx_info for MPICH ch4:ucx)."""
    library = context.get("mpi")
    if library == "openmpi":
        return _open_mpi(context)
    if library == "mpich" and "ch4:ucx" in str(context.get("mpi_library") or ""):
        return _mpich_ucx(context, run)
    return EagerLimit(ALL_EAGER, f"not known for {library or 'this MPI library'}: every message eager")
