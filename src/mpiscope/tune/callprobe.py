"""Which of the library's own algorithm functions a collective call enters,
seen by a debugger: rank 0 of engine/probe/coll_call.c runs under gdb with a
breakpoint on every `ompi_coll_base_<coll>_intra_*` function (exported by
Open MPI 4.1 and 5.0; MPICH hides its MPIR_* functions, so there the check
is by time only, verify.py). The first such function entered after the
marker mpiscope_cell(i) is the algorithm cell i ran.

With the rules file in effect and with each algorithm forced by its MCA
parameter, the same cell must enter the same function: that is the check
that the library loaded the file and selects what it says, without any name
mapping between the file's numbers and the library's functions.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.engine.locations import build_root, source_dir
from mpiscope.engine.make import make
from mpiscope.engine.mpi import Mpi

GDB_SCRIPT = r'''
import gdb
gdb.execute("set pagination off")
gdb.execute("set print thread-events off")
gdb.execute("set confirm off")
gdb.execute("break main")
gdb.execute("run")
for coll in COLLS:
    try:
        gdb.execute("rbreak ^ompi_coll_base_%s_intra_" % coll, to_string=True)
    except gdb.error:
        pass
gdb.execute("break mpiscope_cell")
cell = None
while True:
    try:
        gdb.execute("continue", to_string=True)
    except gdb.error:
        break
    try:
        frame = gdb.selected_frame()
    except gdb.error:
        break
    name = frame.name() or ""
    if name == "mpiscope_cell":
        cell = int(gdb.parse_and_eval("cell"))
        print("@cell %d" % cell)
        if cell == 0:
            break
    elif cell:
        print("@call %d %s" % (cell, name.split("@")[0]))
gdb.execute("kill")
'''


def probe_binary(mpi: Mpi) -> Path:
    out = build_root() / "probes" / hashlib.sha256(mpi.show.encode()).hexdigest()[:16]
    made = make(source_dir("engine"), out, f"MPICC={mpi.wrapper}", "collcall")
    if made.returncode != 0:
        raise UsageError(f"cannot build the collective-call probe with {mpi.wrapper}:\n"
                         f"{made.stderr[-1500:]}")
    return out / "mpi-coll-call"


def available(mpi: Mpi) -> bool:
    return mpi.implementation == "open-mpi" and shutil.which("gdb") is not None


def entered(mpi: Mpi, launcher: str, np: int, cells: list, mca: dict, colls: list,
            oversubscribe: bool = True, timeout: int = 300) -> dict:
    """{(coll, size): the first ompi_coll_base_<coll>_intra_* function entered}
    for `cells` [(coll, size)] on `np` local ranks with MCA parameters `mca`."""
    script = f"COLLS = {list(colls)!r}\n" + GDB_SCRIPT
    return parse(under_gdb(mpi, launcher, np, cells, mca, script, oversubscribe, timeout), cells)


def under_gdb(mpi: Mpi, launcher: str, np: int, cells: list, mca: dict, script: str,
              oversubscribe: bool = True, timeout: int = 300) -> str:
    """The probe's output with rank 0 under gdb running `script` (Python), the
    other np - 1 ranks plain: one call per cell [(coll, size)]."""
    binary = probe_binary(mpi)
    args = [f"{c}:{s}" for c, s in cells]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "probe.py"
        path.write_text(script)
        common = [launcher]
        if oversubscribe:
            common += ["--oversubscribe", "--bind-to", "none"]
        for k, v in mca.items():
            common += ["--mca", k, v]
        cmd = common + ["-n", "1", "gdb", "-q", "-batch", "-x", str(path), "--args",
                        str(binary), *args]
        if np > 1:
            cmd += [":", "-n", str(np - 1), str(binary), *args]
        env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                              stdin=subprocess.DEVNULL).stdout


def parse(text: str, cells: list) -> dict:
    out = {}
    for m in re.finditer(r"^@call (\d+) (\S+)$", text, re.M):
        i = int(m.group(1))
        if 1 <= i <= len(cells) and cells[i - 1] not in out:
            out[cells[i - 1]] = m.group(2)
    return out
