# SPDX-License-Identifier: BSD-3-Clause
"""What differs between the contexts of two runs: the MPI library and its
version, the libraries the engine loaded, the kernel, the CPU and its
frequency governor, the nodes, the environment variables the MPI library
reads, mpiscope's and the engine's versions, the Slurm partition. A field a
run did not store (an older run) reads as unknown."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from mpiscope.store.history_fields import MPI_ENV

UNKNOWN = "unknown"


@dataclass(frozen=True)
class Difference:
    what: str
    before: str
    after: str

    def text(self) -> str:
        return f"{self.what}: {self.before} → {self.after}"

    def to_dict(self) -> dict:
        return asdict(self)


def _get(context, *path):
    value = context
    for key in path:
        value = value.get(key) if isinstance(value, dict) else None
    return None if value in (None, "", {}) else value


def fields(context) -> dict:
    """{what: value} of everything compared; absent values are left out."""
    env = context.get("env") or {}
    machine = context.get("machine") or {}
    found = {
        "MPI library": _get(context, "mpi_identity", "library") or context.get("mpi_library"),
        "MPI version": _get(context, "mpi_identity", "version"),
        "kernel": machine.get("kernel"),
        "CPU model": machine.get("cpu_model"),
        "CPU governor": machine.get("governor"),
        "nodes": ", ".join(sorted(context["hosts"])) if context.get("hosts") else None,
        "mpiscope version": machine.get("mpiscope_version"),
        "mpiscope commit": context.get("git_sha"),
        "engine build": machine.get("engine_sha256"),
        "Slurm partition": env.get("SLURM_JOB_PARTITION"),
        "imported from": _tool(context.get("imported")),
    }
    for name, path in (machine.get("libraries") or {}).items():
        found[f"library {name}"] = path
    for name, value in env.items():
        if name.startswith(MPI_ENV):
            found[f"${name}"] = value
    return {k: str(v) for k, v in found.items() if v is not None}


def _tool(imported):
    """The tool and version an imported run's numbers come from (mpiscope import)."""
    if not isinstance(imported, dict) or not imported.get("tool"):
        return None
    return " ".join(str(x) for x in (imported["tool"], imported.get("version")) if x)


def differences(before: dict, after: dict) -> list[Difference]:
    """What differs from the context `before` to `after`, in a stable order;
    a field only one of them stored shows as unknown on the other side."""
    a, b = fields(before), fields(after)
    return [
        Difference(k, a.get(k, _absent(before, k)), b.get(k, _absent(after, k)))
        for k in dict.fromkeys([*a, *b])
        if a.get(k) != b.get(k)
    ]


def _absent(context, what) -> str:
    """A variable missing from a stored environment was not set; a library
    missing from a stored list was not loaded; anything else is unknown."""
    if what.startswith("$") and "env" in context:
        return "unset"
    if what.startswith("library ") and (context.get("machine") or {}).get("libraries"):
        return "not loaded"
    return UNKNOWN
