"""Which algorithm Open MPI's default runs at each cell, and whether that is
exactly what forcing the algorithm runs: then the adaptive search need not
measure the forced algorithm there, the default's launches are its launches
(tuner.Tuner._measure).

The default (coll_tuned_<coll>_intra_dec_fixed) and a forced algorithm
(coll_tuned_use_dynamic_rules with coll_tuned_<coll>_algorithm) both end in
ompi_coll_tuned_<coll>_intra_do_this(<the MPI call's arguments>, module,
algorithm, faninout, segsize[, max_requests]) (coll_tuned.h, Open MPI 4.1
and 5.0), which calls the algorithm with those arguments. Rank 0 of the
collective-call probe runs under gdb with a breakpoint on each do_this; its
integer arguments are read from the registers and the stack (x86-64 System
V: six in registers, the rest on the stack), at the position the MPI call's
argument count gives. Read with the default and with each such algorithm
forced: the cell is the same when the numbers agree, except the fan-in/out,
which do_this passes to the chain algorithms only (a forced run passes the
MCA fan-out, the default 0). A forced run must read back its own algorithm
number, or nothing is claimed (the reading is not where we think it is).
"""

from __future__ import annotations

import re
import shutil

from mpiscope.tune.callprobe import under_gdb

# do_this's leading arguments: the MPI call's, and the module
LEADING = {"barrier": 2, "bcast": 6, "reduce": 8, "allreduce": 7, "allgather": 8, "alltoall": 8,
           "reduce_scatter_block": 7, "gather": 9, "scatter": 9}
# collectives whose do_this takes max_requests after the segment size
MAX_REQUESTS = ("reduce", "alltoall")

GDB_SCRIPT = r'''
import gdb
gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("break mpiscope_cell")
gdb.execute("run")
REGS = ["rdi", "rsi", "rdx", "rcx", "r8", "r9"]


def arg(i):
    if i < 6:
        return int(gdb.parse_and_eval("(int)$" + REGS[i]))
    return int(gdb.parse_and_eval("*(int*)($rsp + %d)" % (8 * (i - 5))))


for coll in LEADING:   # the tuned component is loaded by now (MPI_Init ran)
    try:
        gdb.execute("break *ompi_coll_tuned_%s_intra_do_this" % coll, to_string=True)
    except gdb.error:
        pass
cell = None
while True:
    name = gdb.selected_frame().name() or ""
    if name == "mpiscope_cell":
        cell = int(gdb.parse_and_eval("(int)$rdi"))
        if cell == 0:
            break
    else:
        for coll, lead in LEADING.items():
            if name.startswith("ompi_coll_tuned_%s_intra_do_this" % coll):
                print("@this %d %s %s" % (cell, coll, " ".join(str(arg(lead + k)) for k in range(4))))
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
gdb.execute("kill")
'''


def available(mpi) -> bool:
    return mpi.implementation == "open-mpi" and mpi.launcher is not None and \
        shutil.which("gdb") is not None


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


def read(mpi, np: int, cells: list, mca: dict) -> dict:
    """parse's answer for `cells` on np local ranks with MCA parameters `mca`."""
    script = f"LEADING = {LEADING!r}\n" + GDB_SCRIPT
    return parse(under_gdb(mpi, mpi.launcher, np, cells, mca, script), cells)


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


def default_runs(mpi, catalog, np: int, cells: list, mca_of, say=print) -> dict:
    """{(coll, size): (the algorithm the default runs there, whether exactly
    as forcing it runs it)}. `mca_of({coll: Algorithm or None})`: the MCA
    parameters of such a launch. Empty when the arguments cannot be read."""
    colls = sorted({c for c, _ in cells})
    default = read(mpi, np, cells, mca_of({c: None for c in colls}))
    by_value = {(c, a.value): a for c in colls for a in catalog.algorithms.get(c, [])}
    wanted = {cell: by_value.get((cell[0], str(t[0]))) for cell, t in default.items()}
    wanted = {cell: a for cell, a in wanted.items() if a is not None}
    rounds = {c: sorted({a.name for (cc, _), a in wanted.items() if cc == c}) for c in colls}
    forced = {}
    for k in range(max([len(v) for v in rounds.values()] + [0])):
        force = {c: catalog.find(c, names[k]) for c, names in rounds.items() if k < len(names)}
        sub = [cell for cell, a in wanted.items() if force.get(cell[0]) == a]
        got = read(mpi, np, sub, mca_of(force))
        forced.update({cell: (wanted[cell].name, got.get(cell)) for cell in sub})
    wrong = [cell for cell, (_, got) in forced.items()
             if got is None or got[0] != default[cell][0]]
    if wrong or not forced:
        say("the default's algorithm could not be read under gdb ("
            + (f"{len(wrong)} forced cells read back another number" if wrong else "nothing read")
            + "): every cell is measured")
        return {}
    return same_cells(default, forced)
