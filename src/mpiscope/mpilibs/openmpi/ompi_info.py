# SPDX-License-Identifier: BSD-3-Clause
"""Which collective algorithms Open MPI offers, read from the library itself:
`ompi_info --param coll tuned --level 9 --parsable`, the enumerators of
`coll_tuned_<coll>_algorithm` (number and name; 0 `ignore` is the library's
own fixed decision), and `--param coll all` for the components that would
take collectives away from `tuned` (a higher priority: Open MPI 5's `han`).
They differ between Open MPI 4.1 and 5.0."""

from __future__ import annotations

import functools
import re
import subprocess
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.algorithm_catalog import COLLECTIVES, Algorithm, Catalog

# Open MPI coll components that never take an intra-communicator's blocking
# collectives from tuned whatever their priority (self: MPI_COMM_SELF only,
# inter: intercommunicators, libnbc: nonblocking, sync: only with barrier_before/after).
HARMLESS = {"self", "inter", "libnbc", "sync", "basic", "monitoring", "ftagree", "tuned"}
# A forced algorithm of these runs with the chain fan-out, the others with the tree fan-out
# (user_forced[…].chain_fanout / tree_fanout in coll_tuned_decision_dynamic.c).
CHAIN_FANOUT = ("bcast", "reduce", "reduce_scatter_block")

ENUM_RE = re.compile(r"^mca:coll:tuned:param:coll_tuned_(\w+?)_algorithm:enumerator:value:(\d+):(.+)$")
PRIO_RE = re.compile(r"^mca:coll:(\w+):param:coll_\w+_priority:value:(-?\d+)$")


def ompi_info_path(mpi) -> str:
    """ompi_info beside the wrapper (mpicc.openmpi → ompi_info, also as ompi_info.openmpi)."""
    folder = Path(mpi.wrapper).parent
    for name in ("ompi_info", "ompi_info.openmpi"):
        if (folder / name).is_file():
            return str(folder / name)
    raise UsageError(
        f"no ompi_info beside {mpi.wrapper}: mpiscope tune reads Open MPI's "
        f"algorithms from it; install Open MPI completely"
    )


@functools.cache
def ompi_info_text(mpi, component: str) -> str:
    p = subprocess.run(
        [ompi_info_path(mpi), "--param", "coll", component, "--level", "9", "--parsable"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    if p.returncode != 0:
        raise UsageError(f"ompi_info failed (exit {p.returncode}): {p.stderr.strip()[-500:]}")
    return p.stdout


def catalog(tuned_text: str, all_text: str, version: str) -> Catalog:
    """From `ompi_info --param coll tuned|all --level 9 --parsable`."""
    algorithms = {}
    for line in tuned_text.splitlines():
        m = ENUM_RE.match(line.strip())
        if m and m.group(1) in COLLECTIVES and m.group(2) != "0":  # 0 "ignore": the default
            algorithms.setdefault(m.group(1), []).append(Algorithm(m.group(3), m.group(2)))
    if not algorithms:
        raise UsageError(
            "ompi_info lists no coll_tuned_*_algorithm enumerators: is the tuned "
            "component there (ompi_info | grep tuned)?"
        )
    params = {
        c: (
            _param(tuned_text, f"coll_tuned_{c}_algorithm_{'chain' if c in CHAIN_FANOUT else 'tree'}_fanout"),
            _param(tuned_text, f"coll_tuned_{c}_algorithm_segmentsize"),
        )
        for c in algorithms
    }
    prios = {m.group(1): int(m.group(2)) for m in map(PRIO_RE.match, all_text.splitlines()) if m}
    tuned = prios.get("tuned", 30)
    above = sorted(c for c, p in prios.items() if p > tuned and c not in HARMLESS)
    return Catalog(
        "openmpi",
        version,
        algorithms,
        "ompi_info --param coll tuned --level 9",
        excluded_components=above,
        rule_params=params,
    )


def _param(text: str, name: str) -> int:
    m = re.search(rf"^mca:coll:tuned:param:{name}:value:(\d+)$", text, re.M)
    return int(m.group(1)) if m else 0
