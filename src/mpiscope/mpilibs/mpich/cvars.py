# SPDX-License-Identifier: BSD-3-Clause
"""Which collective algorithms MPICH offers, read from the library itself:
its control variables through MPI_T (native/engine/probe/mpi_cvars.c, built with
the MPI's own wrapper), the choices listed in the description of
`MPIR_CVAR_<COLL>_INTRA_ALGORITHM`; the names its selection JSON accepts
(`algorithm=MPIR_Bcast_intra_binomial`) and its own default selection tree
are read from the library file it links. They differ between MPICH 4 and 5."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.algorithm_catalog import COLLECTIVES, Algorithm, Catalog


def cvar_name(coll: str) -> str:
    return f"MPIR_CVAR_{coll.upper()}_INTRA_ALGORITHM"


def device_cvar(coll: str) -> str:
    """MPICH's switch of the device's own algorithms for one collective (read
    when MPIR_CVAR_DEVICE_COLLECTIVES is "percoll", its default)."""
    return f"MPIR_CVAR_{coll.upper()}_DEVICE_COLLECTIVE"


def container_prefix(coll: str) -> str:
    """MPIR_Reduce_scatter_block: how MPICH names a collective's algorithms."""
    return "MPIR_" + coll[0].upper() + coll[1:]


def read_cvars(probe: Path, env: dict | None = None):
    """{name: (description, enum items)} as MPI_T lists them, or None when
    MPI_T_init_thread refuses (an invalid value in `env`)."""
    # errors="replace": Intel MPI's descriptions hold Latin-1 bytes ("(R)" as 0xae)
    p = subprocess.run(
        [str(probe)], capture_output=True, text=True, errors="replace", timeout=60, env={**os.environ, **(env or {})}
    )
    if p.returncode != 0:
        return None
    cvars = {}
    for line in p.stdout.splitlines():
        d = json.loads(line)
        cvars[d["name"]] = (d["desc"], d["enum"])
    return cvars


CHOICE_RE = re.compile(r"^\s*([a-z][a-z0-9_]*)\s+-\s", re.M)
GLUED_RE = re.compile(r"([A-Za-z0-9_]+)\s+-\s")


def cvar_choices(desc: str, accepts=None) -> list:
    """The values a MPIR_CVAR_*_ALGORITHM takes, from its description: one
    `name - meaning` a line (MPICH 5). MPICH 4.0 joins the lines without a
    separator ("…Force Binomial Treenb   - Force …"), so a glued word is cut
    to the longest tail the library itself accepts (`accepts(value)`)."""
    if "\n" in desc:
        return [c for c in CHOICE_RE.findall(desc) if c != "auto"]
    out = []
    for i, m in enumerate(GLUED_RE.finditer(desc)):
        word = m.group(1)
        tails = [word[k:] for k in range(len(word)) if re.fullmatch(r"[a-z][a-z0-9_]*", word[k:])]
        if i == 0 and "algorithm" in word and "auto" in tails:
            continue
        for tail in tails:  # longest first
            if tail == "auto":
                break
            if accepts is None or accepts(tail):
                out.append(tail)
                break
    return out


def library_file(probe: Path) -> Path:
    """The MPI library a program built with the wrapper loads (ldd)."""
    p = subprocess.run(["ldd", str(probe)], capture_output=True, text=True, timeout=60)
    for line in p.stdout.splitlines():
        m = re.search(r"(libmpi(?:ch)?\.so[.\d]*)\s+=>\s+(\S+)", line)
        if m:
            return Path(m.group(2))
    raise UsageError(f"cannot tell which MPI library {probe} loads (ldd: {p.stdout.strip()[:300]})")


def library_bytes(probe: Path) -> bytes:
    """The MPI library file a program built with the wrapper loads, whole."""
    return library_file(probe).read_bytes()


def library_containers(blob: bytes) -> set:
    """The algorithm names the selection JSON accepts, as the library spells them."""
    return {m.decode() for m in re.findall(rb"algorithm=(MPIR_[A-Za-z_]+?_(?:intra|inter|allcomm)_\w+)", blob)}


def _compiled_tree(blob: bytes, wanted) -> dict | None:
    """The first selection JSON compiled into the library whose text `wanted(text)`."""
    for m in re.finditer(rb'\{"collective=', blob):
        end = blob.find(b"\0", m.start())
        text = blob[m.start() : end]
        if wanted(text):
            try:
                return json.loads(text)
            except ValueError:
                continue
    return None


def library_default_tree(blob: bytes) -> dict | None:
    """MPICH's own MPIR-level selection JSON, compiled into the library."""
    return _compiled_tree(blob, lambda t: b"algorithm=MPIR_" in t and b"MPIDI_" not in t and b"composition=" not in t)


def library_device_tree(blob: bytes) -> dict | None:
    """The device layer's (ch4) selection JSON, of compositions."""
    return _compiled_tree(blob, lambda t: b"composition=MPIDI_" in t)


def catalog(mpi, probe: Path) -> Catalog:
    """`probe`: native/engine/probe/mpi_cvars.c built with the MPI's wrapper."""
    cvars = read_cvars(probe)
    if cvars is None:
        raise UsageError(f"the MPI_T probe built with {mpi.wrapper} does not start")
    blob = library_bytes(probe)
    containers = library_containers(blob)
    algorithms = {}
    for coll in COLLECTIVES:
        if cvar_name(coll) not in cvars:
            continue

        def accepts(value, coll=coll):
            return read_cvars(probe, {cvar_name(coll): value}) is not None

        for choice in cvar_choices(cvars[cvar_name(coll)][0], accepts):
            prefix = container_prefix(coll)
            found = [c for c in (f"{prefix}_intra_{choice}", f"{prefix}_allcomm_{choice}") if c in containers]
            algorithms.setdefault(coll, []).append(Algorithm(choice, choice, found[0] if found else None))
    if not algorithms:
        raise UsageError(f"{mpi.name} lists no MPIR_CVAR_*_INTRA_ALGORITHM control variables")
    return Catalog(
        "mpich",
        mpi.version,
        algorithms,
        "MPI_T control variables",
        default_tree=library_default_tree(blob),
        containers=frozenset(containers),
        device_override="MPIR_CVAR_DEVICE_COLLECTIVES" in cvars,
        device_percoll=frozenset(c for c in COLLECTIVES if device_cvar(c) in cvars),
    )
