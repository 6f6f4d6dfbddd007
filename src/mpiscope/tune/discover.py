"""Which collective algorithms the MPI library in use offers, read from the
library itself at tune time (they differ between Open MPI 4.1 and 5.0, and
between MPICH 4 and 5):

- Open MPI: `ompi_info --param coll tuned --level 9 --parsable`, the
  enumerators of `coll_tuned_<coll>_algorithm` (number and name; 0 `ignore`
  is the library's own fixed decision), and `--param coll all` for the
  components that would take collectives away from `tuned` (a higher
  priority: Open MPI 5's `han`).
- MPICH: its control variables through MPI_T (engine/probe/mpi_cvars.c,
  built with the MPI's own wrapper), the choices listed in the description
  of `MPIR_CVAR_<COLL>_INTRA_ALGORITHM`; the names its selection JSON
  accepts (`algorithm=MPIR_Bcast_intra_binomial`) and its own default
  selection tree are read from the library file it links.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.engine.locations import build_root, source_dir
from mpiscope.engine.make import make
from mpiscope.engine.mpi import Mpi

COLLECTIVES = ("allreduce", "bcast", "reduce", "allgather", "alltoall", "reduce_scatter_block",
               "gather", "scatter", "barrier")
DEFAULT = "default"  # the library's own choice: no algorithm forced
# Open MPI coll components that never take an intra-communicator's blocking
# collectives from tuned whatever their priority (self: MPI_COMM_SELF only,
# inter: intercommunicators, libnbc: nonblocking, sync: only with barrier_before/after).
OMPI_HARMLESS = {"self", "inter", "libnbc", "sync", "basic", "monitoring", "ftagree", "tuned"}


@dataclass(frozen=True)
class Algorithm:
    name: str           # the library's name (ring, binomial, …)
    value: str          # what forces it: Open MPI's number, MPICH's cvar value
    container: str | None = None  # MPICH: its name in the selection JSON (None: not selectable)


@dataclass
class Catalog:
    """The algorithms of every tuned collective, as the library in use says."""
    library: str        # openmpi | mpich
    version: str
    algorithms: dict    # collective -> [Algorithm]
    source: str         # what the catalog was read from
    excluded_components: list = field(default_factory=list)  # Open MPI: coll components above tuned
    default_tree: dict | None = None   # MPICH: the library's own selection JSON (MPIR level)
    containers: frozenset = frozenset()  # MPICH: every algorithm name its selection JSON accepts
    device_override: bool = False      # MPICH: MPIR_CVAR_DEVICE_COLLECTIVES exists
    device_percoll: frozenset = frozenset()  # MPICH: collectives with MPIR_CVAR_<COLL>_DEVICE_COLLECTIVE
    # Open MPI: the fan-in/out and segment size a forced algorithm runs with
    # (its MCA defaults), which a rule must repeat to select the same thing.
    rule_params: dict = field(default_factory=dict)   # collective -> (faninout, segsize)

    def names(self, coll):
        return [a.name for a in self.algorithms.get(coll, [])]

    def find(self, coll, name) -> Algorithm:
        for a in self.algorithms.get(coll, []):
            if a.name == name:
                return a
        raise UsageError(f"{self.library} {self.version} has no {coll} algorithm '{name}'; it has: "
                         f"{', '.join(self.names(coll)) or 'none'}")

    def to_dict(self):
        return {"library": self.library, "version": self.version, "source": self.source,
                "excluded_components": self.excluded_components,
                "algorithms": {c: [{"name": a.name, "value": a.value, "container": a.container}
                                   for a in algs] for c, algs in self.algorithms.items()}}


def discover(mpi: Mpi) -> Catalog:
    if mpi.implementation == "open-mpi":
        return ompi_catalog(ompi_info_text(mpi, "tuned"), ompi_info_text(mpi, "all"), mpi.version)
    if mpi.implementation == "mpich":
        return mpich_catalog(mpi)
    raise UsageError(f"mpiscope tune knows Open MPI and MPICH; {mpi.name} ({mpi.wrapper}) is "
                     f"neither")


# ---------------------------------------------------------------- Open MPI

def ompi_info_path(mpi: Mpi) -> str:
    """ompi_info beside the wrapper (mpicc.openmpi → ompi_info, also as ompi_info.openmpi)."""
    folder = Path(mpi.wrapper).parent
    for name in ("ompi_info", "ompi_info.openmpi"):
        if (folder / name).is_file():
            return str(folder / name)
    raise UsageError(f"no ompi_info beside {mpi.wrapper}: mpiscope tune reads Open MPI's "
                     f"algorithms from it; install Open MPI completely")


@functools.cache
def ompi_info_text(mpi: Mpi, component: str) -> str:
    p = subprocess.run([ompi_info_path(mpi), "--param", "coll", component, "--level", "9",
                        "--parsable"], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise UsageError(f"ompi_info failed (exit {p.returncode}): {p.stderr.strip()[-500:]}")
    return p.stdout


ENUM_RE = re.compile(r"^mca:coll:tuned:param:coll_tuned_(\w+?)_algorithm:enumerator:value:(\d+):(.+)$")
PRIO_RE = re.compile(r"^mca:coll:(\w+):param:coll_\w+_priority:value:(-?\d+)$")


def ompi_catalog(tuned_text: str, all_text: str, version: str) -> Catalog:
    """From `ompi_info --param coll tuned|all --level 9 --parsable`."""
    algorithms = {}
    for line in tuned_text.splitlines():
        m = ENUM_RE.match(line.strip())
        if m and m.group(1) in COLLECTIVES and m.group(2) != "0":  # 0 "ignore": the default
            algorithms.setdefault(m.group(1), []).append(Algorithm(m.group(3), m.group(2)))
    if not algorithms:
        raise UsageError("ompi_info lists no coll_tuned_*_algorithm enumerators: is the tuned "
                         "component there (ompi_info | grep tuned)?")
    params = {c: (_param(tuned_text, f"coll_tuned_{c}_algorithm_"
                         f"{'chain' if c in CHAIN_FANOUT else 'tree'}_fanout"),
                  _param(tuned_text, f"coll_tuned_{c}_algorithm_segmentsize")) for c in algorithms}
    prios = {m.group(1): int(m.group(2)) for m in map(PRIO_RE.match, all_text.splitlines()) if m}
    tuned = prios.get("tuned", 30)
    above = sorted(c for c, p in prios.items() if p > tuned and c not in OMPI_HARMLESS)
    return Catalog("openmpi", version, algorithms, "ompi_info --param coll tuned --level 9",
                   excluded_components=above, rule_params=params)


# A forced algorithm of these runs with the chain fan-out, the others with the tree fan-out
# (user_forced[…].chain_fanout / tree_fanout in coll_tuned_decision_dynamic.c).
CHAIN_FANOUT = ("bcast", "reduce", "reduce_scatter_block")


def _param(text: str, name: str) -> int:
    m = re.search(rf"^mca:coll:tuned:param:{name}:value:(\d+)$", text, re.M)
    return int(m.group(1)) if m else 0


def ompi_mca(coll: str, algorithm: Algorithm | None) -> dict:
    """MCA parameters forcing `algorithm` for `coll` (None: the library's default)."""
    if algorithm is None:
        return {}
    return {"coll_tuned_use_dynamic_rules": "1", f"coll_tuned_{coll}_algorithm": algorithm.value}


# ---------------------------------------------------------------- MPICH

def cvar_name(coll: str) -> str:
    return f"MPIR_CVAR_{coll.upper()}_INTRA_ALGORITHM"


def container_prefix(coll: str) -> str:
    """MPIR_Reduce_scatter_block: how MPICH names a collective's algorithms."""
    return "MPIR_" + coll[0].upper() + coll[1:]


@functools.cache
def cvars_probe(mpi: Mpi) -> Path:
    out = build_root() / "probes" / hashlib.sha256(mpi.show.encode()).hexdigest()[:16]
    made = make(source_dir("engine"), out, f"MPICC={mpi.wrapper}", "cvars")
    if made.returncode != 0:
        raise UsageError(f"cannot build the MPI_T probe with {mpi.wrapper}:\n{made.stderr[-1500:]}")
    return out / "mpi-cvars"


def read_cvars(probe: Path, env: dict | None = None):
    """{name: (description, enum items)} as MPI_T lists them, or None when
    MPI_T_init_thread refuses (an invalid value in `env`)."""
    p = subprocess.run([str(probe)], capture_output=True, text=True, timeout=60,
                       env={**os.environ, **(env or {})})
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


def library_containers(blob: bytes) -> set:
    """The algorithm names the selection JSON accepts, as the library spells them."""
    return {m.decode() for m in re.findall(rb"algorithm=(MPIR_[A-Za-z_]+?_(?:intra|inter|allcomm)_\w+)",
                                           blob)}


def library_default_tree(blob: bytes) -> dict | None:
    """MPICH's own MPIR-level selection JSON, compiled into the library."""
    for m in re.finditer(rb'\{"collective=', blob):
        end = blob.find(b"\0", m.start())
        text = blob[m.start():end]
        if b"algorithm=MPIR_" in text and b"MPIDI_" not in text and b"composition=" not in text:
            try:
                return json.loads(text)
            except ValueError:
                continue
    return None


def mpich_catalog(mpi: Mpi) -> Catalog:
    probe = cvars_probe(mpi)
    cvars = read_cvars(probe)
    if cvars is None:
        raise UsageError(f"the MPI_T probe built with {mpi.wrapper} does not start")
    blob = library_file(probe).read_bytes()
    containers = library_containers(blob)
    algorithms = {}
    for coll in COLLECTIVES:
        if cvar_name(coll) not in cvars:
            continue

        def accepts(value, coll=coll):
            return read_cvars(probe, {cvar_name(coll): value}) is not None

        for choice in cvar_choices(cvars[cvar_name(coll)][0], accepts):
            prefix = container_prefix(coll)
            found = [c for c in (f"{prefix}_intra_{choice}", f"{prefix}_allcomm_{choice}")
                     if c in containers]
            algorithms.setdefault(coll, []).append(
                Algorithm(choice, choice, found[0] if found else None))
    if not algorithms:
        raise UsageError(f"{mpi.name} lists no MPIR_CVAR_*_INTRA_ALGORITHM control variables")
    return Catalog("mpich", mpi.version, algorithms, "MPI_T control variables",
                   default_tree=library_default_tree(blob), containers=frozenset(containers),
                   device_override="MPIR_CVAR_DEVICE_COLLECTIVES" in cvars,
                   device_percoll=frozenset(c for c in COLLECTIVES
                                            if device_cvar(c) in cvars))


def device_cvar(coll: str) -> str:
    """MPICH's switch of the device's own algorithms for one collective (read
    when MPIR_CVAR_DEVICE_COLLECTIVES is "percoll", its default)."""
    return f"MPIR_CVAR_{coll.upper()}_DEVICE_COLLECTIVE"


def mpich_env(coll: str, algorithm: Algorithm | None) -> dict:
    """Control variables forcing `algorithm` (None: the default). The device
    layer's own collectives are switched off, so MPIR's choice is what runs."""
    env = {"MPIR_CVAR_DEVICE_COLLECTIVES": "none"}
    if algorithm is not None:
        env[cvar_name(coll)] = algorithm.value
        # An algorithm that cannot serve the call must fail, not be measured under
        # the name of the one MPICH falls back to.
        env["MPIR_CVAR_COLLECTIVE_FALLBACK"] = "error"
    return env
