# SPDX-License-Identifier: BSD-3-Clause
"""MPICH's collective-selection JSON (MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE,
src/mpi/coll/src/csel.c in 4.x and 5.x): a writer and our own reader. The file is
a tree of conditions ("comm_size<=8", "avg_msg_size<4096", "…=any"), the first
that holds entered, down to {"algorithm=MPIR_Bcast_intra_binomial": {}}.

A collective the file lacks has no algorithm at all, so the file written is the
library's own tree (cvars.py) with each tuned collective's
intra-communicator subtree replaced: measured rules at a tuned size p, the
library's subtree elsewhere and where its default won. MPICH's search misreads
"comm_size<N" where its pruning does not: `_as_searched` says how it is written."""

from __future__ import annotations

import copy
import json

from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.algorithm_catalog import DEFAULT, Catalog
from mpiscope.mpilibs.selection import check

INTRA = "comm_type=intra"
# avg_msg_size (per rank, one block) exists for these only; the others are
# keyed on total_msg_size (the whole message).
AVG = ("allreduce", "bcast", "reduce", "alltoall")


def size_key(coll: str) -> str | None:
    """The size condition for `coll` (None: barrier has none)."""
    if coll == "barrier":
        return None
    return "avg_msg_size" if coll in AVG else "total_msg_size"


def _leaf(catalog: Catalog, coll: str, name: str, default_intra):
    if name == DEFAULT:
        return default_intra
    container = catalog.find(coll, name).container
    if container is None:
        raise UsageError(f"MPICH {catalog.version}'s selection JSON has no name for {coll} algorithm '{name}'")
    leaf = {f"algorithm={container}": {}}
    if container.endswith("_smp"):
        # As in MPICH's own tree: the node-aware algorithms only on a parent
        # communicator (they call the collective again on their node communicator).
        return {"comm_hierarchy=parent": leaf, "comm_hierarchy=any": default_intra}
    return leaf


# Conditions MPICH's prune_tree decides when a communicator is created; it
# stops at the first other one.
PRUNED = ("comm_type=", "comm_size", "comm_hierarchy=", "is_node_consecutive", "comm_avg_ppn")


# MPICH's search (MPIR_Csel_search, 4.0 to 5.0) takes "comm_size<N" for "comm_size<=N";
# only the pruning at communicator creation (prune_tree) reads it right, and it stops at
# the first condition not about the communicator. The library's subtree below our size
# conditions is searched unpruned, so the conditions the pruning would have decided are
# rewritten, and those the library's own search decides are left as they are: the library
# decides as before, its slip included. Left alone, bcast's "comm_size<8" would send every
# bcast on 8 ranks to binomial; all rewritten, alltoall on 8 ranks would run brucks where
# the default runs scattered: either way a cell without a rule would change.
def _as_searched(node: dict, pruned: bool = True) -> dict:
    """`node` as it reads when searched: each "comm_size<N" that the pruning
    would have reached (only pruned conditions before it, above and as
    earlier siblings) written "comm_size<=N-1"."""
    out = {}
    for k, v in node.items():
        key = k.replace(" ", "")
        if pruned and key.startswith("comm_size<") and not key.startswith("comm_size<="):
            k = f"comm_size<={int(key[len('comm_size<') :]) - 1}"
        here = pruned and key.startswith(PRUNED)
        out[k] = _as_searched(v, here) if isinstance(v, dict) else v
        pruned = here  # a sibling is reached by the failure of this one
    return out


def _size_chain(catalog, coll, rules, default_intra):
    key = size_key(coll)
    if key is None:  # barrier: no size to choose by
        return _leaf(catalog, coll, rules[0].algorithm, default_intra)
    chain = {}
    for r, nxt in zip(rules, rules[1:]):
        chain[f"{key}<{nxt.start}"] = _leaf(catalog, coll, r.algorithm, default_intra)
    chain[f"{key}=any"] = _leaf(catalog, coll, rules[-1].algorithm, default_intra)
    return chain


def write(table: dict, catalog: Catalog) -> str:
    """The selection JSON for `table` {collective: {p: [Rule]}}."""
    if not catalog.default_tree:
        raise UsageError(
            f"MPICH {catalog.version}: its own selection tree was not found in the "
            f"library file, so a file covering every collective cannot be written"
        )
    tree = copy.deepcopy(catalog.default_tree)
    for coll, by_p in table.items():
        key = f"collective={coll}"
        own = tree.get(key, {})
        default_intra = own.get(INTRA)
        if default_intra is None:
            raise UsageError(f"MPICH {catalog.version}'s own tree has no {key} / {INTRA}")
        intra, below = {}, 0
        for p in sorted(by_p):
            if p - 1 > below:
                intra[f"comm_size<={p - 1}"] = default_intra
            intra[f"comm_size<={p}"] = _size_chain(
                catalog, coll, check(by_p[p], f"{coll} p={p}"), _as_searched(default_intra)
            )
            below = p
        intra["comm_size=any"] = default_intra
        tree[key] = {INTRA: intra, **{k: v for k, v in own.items() if k != INTRA}}
    return json.dumps(tree, indent=1) + "\n"


OPERATORS = (
    "collective=",
    "comm_type=",
    "comm_size",
    "avg_msg_size",
    "total_msg_size",
    "count",
    "is_",
    "comm_hierarchy=",
    "comm_avg_ppn",
)


def read(text: str, catalog: Catalog | None = None, path: str = "selection.json") -> dict:
    """Parses and checks a selection JSON as MPICH would: every key a known
    condition or an algorithm the library has, every non-"any" size or
    communicator condition followed by a sibling. Returns the tree."""
    try:
        tree = json.loads(text)
    except ValueError as e:
        raise UsageError(f"{path}: not JSON ({e})") from None

    def walk(node, where):
        if not isinstance(node, dict):
            raise UsageError(f"{path}: {where}: every value must be an object")
        keys = [k.replace(" ", "") for k in node]
        for i, (k, v) in enumerate(zip(keys, node.values())):
            if k.startswith(("algorithm=", "composition=")):
                name = k.split("=", 1)[1]
                if catalog is not None and k.startswith("algorithm=") and name not in catalog.containers:
                    raise UsageError(
                        f"{path}: {where}: MPICH {catalog.version} has no algorithm {name} (it would abort at MPI_Init)"
                    )
                continue
            if not k.startswith(OPERATORS):
                raise UsageError(f"{path}: {where}: unknown condition '{k}'")
            if k.startswith(("comm_size<", "avg_msg_size<", "total_msg_size<", "count<")) and i == len(keys) - 1:
                raise UsageError(
                    f"{path}: {where}: '{k}' is the last condition; MPICH needs one after it (end with '…=any')"
                )
            walk(v, f"{where}/{k}")

    walk(tree, "")
    return tree


def selects(tree: dict, coll: str, p: int, size: int) -> str:
    """The algorithm (container name) our part of the tree selects for an
    intra-communicator call, or DEFAULT where it leads into the library's own
    subtree (a condition we never write)."""
    node = tree.get(f"collective={coll}", {}).get(INTRA)
    while isinstance(node, dict):
        for k, v in node.items():
            k = k.replace(" ", "")
            if k.startswith("algorithm="):
                return k.split("=", 1)[1]
            name, _, value = k.partition("<")
            if k.endswith("=any") or k == "comm_hierarchy=parent":  # the tuned comm is a parent
                node = v
                break
            if name in ("comm_size", "avg_msg_size", "total_msg_size") and value:
                x = p if name == "comm_size" else size
                if (x <= int(value[1:])) if value.startswith("=") else (x < int(value)):
                    node = v
                    break
                continue
            return DEFAULT  # a condition of the library's own tree
        else:
            return DEFAULT
    return DEFAULT
