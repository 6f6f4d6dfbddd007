# SPDX-License-Identifier: BSD-3-Clause
"""What a library offers for its collectives: the algorithms of each, as the
library in use says (read at tune time: they differ between versions)."""

from __future__ import annotations

from dataclasses import dataclass, field

from mpiscope.common.errors import UsageError

COLLECTIVES = (
    "allreduce",
    "bcast",
    "reduce",
    "allgather",
    "alltoall",
    "reduce_scatter_block",
    "gather",
    "scatter",
    "barrier",
)
DEFAULT = "default"  # the library's own choice: no algorithm forced


@dataclass(frozen=True)
class Algorithm:
    name: str  # the library's name (ring, binomial, …)
    value: str  # what forces it: Open MPI's number, MPICH's cvar value, Intel MPI's preset
    container: str | None = None  # MPICH: its name in the selection JSON (None: not selectable)


@dataclass
class Catalog:
    """The algorithms of every tuned collective, as the library in use says."""

    library: str  # the library's key (mpilibs registry): openmpi | mpich | intelmpi
    version: str
    algorithms: dict  # collective -> [Algorithm]
    source: str  # what the catalog was read from
    excluded_components: list = field(default_factory=list)  # Open MPI: coll components above tuned
    default_tree: dict | None = None  # MPICH: the library's own selection JSON (MPIR level)
    containers: frozenset = frozenset()  # MPICH: every algorithm name its selection JSON accepts
    device_override: bool = False  # MPICH: MPIR_CVAR_DEVICE_COLLECTIVES exists
    device_percoll: frozenset = frozenset()  # MPICH: collectives with MPIR_CVAR_<COLL>_DEVICE_COLLECTIVE
    # Open MPI: the fan-in/out and segment size a forced algorithm runs with
    # (its MCA defaults), which a rule must repeat to select the same thing.
    rule_params: dict = field(default_factory=dict)  # collective -> (faninout, segsize)

    def names(self, coll):
        return [a.name for a in self.algorithms.get(coll, [])]

    def find(self, coll, name) -> Algorithm:
        for a in self.algorithms.get(coll, []):
            if a.name == name:
                return a
        raise UsageError(
            f"{self.library} {self.version} has no {coll} algorithm '{name}'; it has: "
            f"{', '.join(self.names(coll)) or 'none'}"
        )

    def to_dict(self):
        return {
            "library": self.library,
            "version": self.version,
            "source": self.source,
            "excluded_components": self.excluded_components,
            "algorithms": {
                c: [{"name": a.name, "value": a.value, "container": a.container} for a in algs]
                for c, algs in self.algorithms.items()
            },
        }
