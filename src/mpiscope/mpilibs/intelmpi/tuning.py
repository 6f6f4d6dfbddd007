# SPDX-License-Identifier: BSD-3-Clause
"""Intel MPI's JSON tuning file (I_MPI_TUNING=FILE, as mpitune writes it), writer and
reader: several tuned communicator sizes, which I_MPI_ADJUST_<OP> cannot hold.

    {"coll=Bcast": {"ppn=4": {"comm_size=2": {"comm_id=-1": {
        "msg_size=90": {"BCAST=1": {}}, "msg_size=-1": {"BCAST=3": {}}}}, …}}}

At each level Intel MPI 2021 takes the first key at or above the call's value
(-1: no bound), else the last (established under gdb, calls.py): one ppn
entry serves any ranks per node, a size between two tuned ones takes the larger's
rules. A collective the file names loses the library's own choice everywhere."""

from __future__ import annotations

import json

from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.algorithm_catalog import DEFAULT, Catalog
from mpiscope.mpilibs.intelmpi.adjust import named, segments
from mpiscope.mpilibs.intelmpi.presets import preset_name
from mpiscope.mpilibs.selection import check

# The collectives' names in the file
NAMES = {
    "allreduce": "Allreduce",
    "bcast": "Bcast",
    "reduce": "Reduce",
    "allgather": "Allgather",
    "alltoall": "Alltoall",
    "reduce_scatter_block": "Reduce_scatter_block",
    "gather": "Gather",
    "scatter": "Scatter",
    "barrier": "Barrier",
}
COMM_ID = "comm_id=-1"  # every communicator


def write(table: dict, catalog: Catalog) -> str:
    """The tuning file for `table` {collective: {p: [Rule]}}: every
    communicator size's rules under one ppn entry (the largest p)."""
    doc = {}
    for coll, by_p in table.items():
        if not named(by_p):
            continue
        sizes = {}
        for p in sorted(by_p):
            segs = segments(coll, check(by_p[p], f"{coll} p={p}"), catalog)
            sizes[f"comm_size={p}"] = {
                COMM_ID: {
                    f"msg_size={-1 if i == len(segs) - 1 else hi}": {f"{coll.upper()}={k}": {}}
                    for i, (k, _, hi) in enumerate(segs)
                }
            }
        doc[f"coll={NAMES[coll]}"] = {f"ppn={max(by_p)}": sizes}
    return json.dumps(doc, indent=1) + "\n"


def _keyed(node, prefix: str, where: str) -> list:
    """[(number, child)] of an object whose keys are `prefix` N, rising, -1 (no bound) last only."""
    if not isinstance(node, dict) or not node:
        raise UsageError(f"{where}: expected an object of '{prefix}N' keys")
    out = []
    for k, v in node.items():
        if not k.startswith(prefix) or not k[len(prefix) :].lstrip("-").isdigit():
            raise UsageError(f"{where}: '{k}' is not '{prefix}N'")
        n = int(k[len(prefix) :])
        if out and (out[-1][0] == -1 or (n != -1 and n <= out[-1][0])):
            raise UsageError(
                f"{where}: '{k}' does not rise above the key before it "
                f"(Intel MPI takes the first key at or above a call's value)"
            )
        out.append((n, v))
    return out


def read(text: str, catalog: Catalog | None = None, path: str = "tuning.json") -> dict:
    """{collective: [(ppn, [(comm size, [(msg size bound, preset)])])]}, checked."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise UsageError(f"{path}: not JSON ({e})") from None
    by_name = {f"coll={v}": k for k, v in NAMES.items()}
    out = {}
    for key, node in doc.items():
        coll = by_name.get(key)
        if coll is None:
            raise UsageError(f"{path}: '{key}' is not a collective mpiscope tunes ({', '.join(by_name)})")
        ppns = []
        for ppn, comms in _keyed(node, "ppn=", f"{path}: {key}"):
            sizes = []
            for p, ids in _keyed(comms, "comm_size=", f"{path}: {key}"):
                if list(ids) != [COMM_ID]:
                    raise UsageError(f"{path}: {key} comm_size={p}: expected '{COMM_ID}' alone")
                msgs = []
                for bound, leaf in _keyed(ids[COMM_ID], "msg_size=", f"{path}: {key} comm_size={p}"):
                    msgs.append((bound, _preset(coll, leaf, catalog, f"{path}: {key} comm_size={p}")))
                sizes.append((p, msgs))
            ppns.append((ppn, sizes))
        out[coll] = ppns
    return out


def _preset(coll, leaf, catalog, where) -> int:
    if not isinstance(leaf, dict) or len(leaf) != 1:
        raise UsageError(f"{where}: expected one '{coll.upper()}=PRESET' key")
    ((k, v),) = leaf.items()
    name, _, value = k.partition("=")
    if name != coll.upper() or not value.isdigit() or v != {}:
        raise UsageError(f"{where}: '{k}' is not '{coll.upper()}=PRESET': {{}}")
    if catalog is not None and int(value) != 0 and preset_name(int(value)) not in catalog.names(coll):
        raise UsageError(f"{where}: Intel MPI {catalog.version} has no {coll} preset {value}")
    return int(value)


def _first_at_or_above(entries: list, x: int):
    return next((v for n, v in entries if n == -1 or n >= x), entries[-1][1])


def selects(parsed: dict, coll: str, p: int, size: int) -> str:
    """The preset (its name) the file gives a call of `size` bytes on p ranks
    of one node, or DEFAULT where it does not name the collective."""
    if coll not in parsed:
        return DEFAULT
    sizes = _first_at_or_above(parsed[coll], p)
    return preset_name(_first_at_or_above(_first_at_or_above(sizes, p), size))
