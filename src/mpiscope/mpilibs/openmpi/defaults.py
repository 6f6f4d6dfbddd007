# SPDX-License-Identifier: BSD-3-Clause
"""Which algorithm Open MPI's default runs at each cell, whether exactly as forcing
it runs, and which forced algorithms run another's code there (the adaptive
search then measures such code once: tune/readings.py). The default and a forced
algorithm both end in ompi_coll_tuned_<coll>_intra_do_this (coll_tuned.h, 4.1
and 5.0); under gdb rank 0 of the collective-call probe reads its algorithm,
fan-in/out and segment size (x86-64 System V), and a forced run must read back
its own number, or nothing is claimed. The same launches trace each cell
(ompi_coll_base_* entered, the PML's point-to-point calls, waits): the default
runs X when the numbers (but the fan-out) and traces agree with X forced; a
forced algorithm that only calls another's code is a delegation (`delegations`)."""

from __future__ import annotations

import re
from pathlib import Path

from mpiscope.mpilibs.algorithm_catalog import DEFAULT
from mpiscope.mpilibs.library import Reading
from mpiscope.mpilibs.gdb_script import FINISH, PRELUDE
from mpiscope.mpilibs.openmpi.calls import LIBRARIES, under_gdb

# do_this's leading arguments: the MPI call's, and the module
LEADING = {
    "barrier": 2,
    "bcast": 6,
    "reduce": 8,
    "allreduce": 7,
    "allgather": 8,
    "alltoall": 8,
    "reduce_scatter_block": 7,
    "gather": 9,
    "scatter": 9,
}
# collectives whose do_this takes max_requests after the segment size
MAX_REQUESTS = ("reduce", "alltoall")

GDB_SCRIPT = (
    PRELUDE
    + r'''
import re
gdb.execute("break mpiscope_cell")
gdb.execute("run")
REGS = ["rdi", "rsi", "rdx", "rcx", "r8", "r9"]


def arg(i):
    if i < 6:
        return int(gdb.parse_and_eval("(int)$" + REGS[i]))
    return int(gdb.parse_and_eval("*(int*)($rsp + %d)" % (8 * (i - 5))))


def at_entry(patterns):
    """A breakpoint at the first instruction of each function matching one of
    `patterns`, where the arguments are still in place. gdb lists the
    candidates once, with their addresses (each "info functions" costs about
    the same whatever it matches, and a breakpoint by name costs a lookup)."""
    listing = gdb.execute("info functions ^ompi_coll_\\|^mca_pml_\\|^ompi_request_default_wait",
                          to_string=True)
    for address, name in sorted(set(re.findall(r"^(0x[0-9a-f]+)\s+(\S+)$", listing, re.M))):
        if "@" not in name and any(re.search(p, name) for p in patterns):
            gdb.execute("break *" + address, to_string=True)


# the components are loaded by now (MPI_Init ran)
load_symbols()
at_entry([p % coll for coll in LEADING for p in ("^ompi_coll_tuned_%s_intra_do_this$", "^ompi_coll_base_%s_")]
         + ["^mca_pml_[a-z0-9]*_%s$" % op for op in ("isend", "send", "irecv", "recv")]
         + ["^ompi_request_default_wait"])
cell = None
while True:
    name = gdb.selected_frame().name() or ""
    if name == "mpiscope_cell":
        cell = int(gdb.parse_and_eval("(int)$rdi"))
        if cell == 0:
            break
    elif name.startswith("ompi_coll_tuned_"):
        for coll, lead in LEADING.items():
            if name.startswith("ompi_coll_tuned_%s_intra_do_this" % coll):
                print("@this %d %s %s" % (cell, coll, " ".join(str(arg(lead + k)) for k in range(4))))
    elif name.startswith("ompi_coll_base_"):
        print("@ev %d enter %s" % (cell, name[len("ompi_coll_base_"):]))
    elif name.startswith("mca_pml_"):   # (buffer, count, datatype, peer, tag, ...)
        print("@ev %d %s %d %d %d" % (cell, name.rsplit("_", 1)[1], arg(1), arg(3), arg(4)))
    elif name.startswith("ompi_request_default_wait"):
        many = name.endswith(("_all", "_any", "_some"))   # (count, requests, ...)
        print("@ev %d %s%s" % (cell, name[len("ompi_request_default_"):],
                               " %d" % arg(0) if many else ""))
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
'''
    + FINISH
)


def parse(text: str, cells: list) -> dict:
    """{(coll, size): (algorithm, faninout, segsize, max_requests or None)}:
    the first do_this of the cell's own collective (an algorithm may call
    other collectives through the tuned component)."""
    out = {}
    for m in re.finditer(r"^@this (\d+) (\w+) (-?\d+) (-?\d+) (-?\d+) (-?\d+)$", text, re.M):
        i, coll = int(m.group(1)), m.group(2)
        if 1 <= i <= len(cells) and cells[i - 1][0] == coll and cells[i - 1] not in out:
            alg, fan, seg, req = (int(m.group(k)) for k in range(3, 7))
            out[cells[i - 1]] = (alg, fan, seg, req if coll in MAX_REQUESTS else None)
    return out


def traces(text: str, cells: list) -> dict:
    """{(coll, size): (what rank 0 did in the cell, in order)}: functions
    entered, point-to-point calls, waits."""
    out = {}
    for m in re.finditer(r"^@ev (\d+) (.+)$", text, re.M):
        i = int(m.group(1))
        if 1 <= i <= len(cells):
            out.setdefault(cells[i - 1], []).append(m.group(2))
    return {cell: tuple(t) for cell, t in out.items()}


def read(mpi, probe: Path, np: int, cells: list, mca: dict):
    """(parse's answer, traces') for `cells` on np local ranks with MCA
    parameters `mca`."""
    script = f"LIBRARIES = {LIBRARIES!r}\nLEADING = {LEADING!r}\n" + GDB_SCRIPT
    text = under_gdb(mpi, probe, np, cells, mca, script)
    return parse(text, cells), traces(text, cells)


def same_cells(default: dict, forced: dict) -> dict:
    """{(coll, size): (name, exact)}: the algorithm the default runs at each
    cell, exact when its do_this arguments are a forced run's. `default` as
    parse gives; `forced` {(coll, size): (name, numbers read with it forced)}."""
    out = {}
    for cell, (name, got) in forced.items():
        mine = default[cell]
        fan_matters = "chain" in name
        exact = mine[0] == got[0] and mine[2:] == got[2:] and (mine[1] == got[1] or not fan_matters)
        out[cell] = (name, exact)
    return out


# Open MPI's own fall-backs, decided by the call's count, the communicator size and the
# operation (the same on every rank): allreduce's segmented ring without a segment size
# runs the ring; the ring with fewer elements than ranks runs recursive doubling.
def delegations(traced: dict) -> dict:
    """{(coll, size, name): the configuration it runs}: a forced algorithm
    whose trace is its own first function and then another configuration's
    whole trace (DEFAULT preferred). `traced` {name or DEFAULT: traces}."""
    out = {}
    for name, by_cell in traced.items():
        for cell, t in by_cell.items() if name != DEFAULT else ():
            if len(t) < 2 or not t[0].startswith("enter ") or not t[1].startswith("enter "):
                continue
            for other in sorted(traced, key=lambda n: n != DEFAULT):
                if other != name and traced[other].get(cell) == t[1:]:
                    out[(*cell, name)] = other
                    break
    return out


def read_cells(mpi, probe: Path, catalog, np: int, cells: list, names: dict, mca_of, say=print) -> Reading:
    """The default read at `cells`, then each collective's algorithms of
    `names` {coll: [name]} forced, one launch forcing each collective's k-th.
    `mca_of({coll: Algorithm or None})`: the MCA parameters of such a launch;
    `probe`: native/engine/probe/coll_call.c built with the MPI's wrapper.
    Empty when the arguments cannot be read."""
    colls = sorted({c for c, _ in cells})
    default, traced = read(mpi, probe, np, cells, mca_of({c: None for c in colls}))
    traced = {DEFAULT: traced}
    got = {}
    for k in range(max([len(names.get(c, [])) for c in colls] + [0])):
        force = {c: catalog.find(c, names[c][k]) for c in colls if k < len(names.get(c, []))}
        sub = [cell for cell in cells if cell[0] in force]
        numbers, by_cell = read(mpi, probe, np, sub, mca_of(force))
        for cell in sub:
            name = force[cell[0]].name
            got[(*cell, name)] = numbers.get(cell)
            traced.setdefault(name, {})[cell] = by_cell.get(cell, ())
    by_value = {(c, a.value): a.name for c in colls for a in catalog.algorithms.get(c, [])}
    runs = {cell: by_value.get((cell[0], str(t[0]))) for cell, t in default.items()}
    forced = {cell: (n, got.get((*cell, n))) for cell, n in runs.items() if (*cell, n) in got}
    wrong = [cell for cell, (_, numbers) in forced.items() if numbers is None or numbers[0] != default[cell][0]]
    if wrong or not forced:
        say(
            "the default's algorithm could not be read under gdb ("
            + (f"{len(wrong)} forced cells read back another number" if wrong else "nothing read")
            + "): every cell is measured"
        )
        return Reading({}, {})
    same = same_cells(default, forced)  # and every event of rank 0 the same, too
    same = {cell: (n, exact and traced[n].get(cell) == traced[DEFAULT].get(cell)) for cell, (n, exact) in same.items()}
    return Reading(same, delegations(traced))
