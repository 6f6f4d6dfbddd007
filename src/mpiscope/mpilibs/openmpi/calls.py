# SPDX-License-Identifier: BSD-3-Clause
"""Which of Open MPI's own algorithm functions a collective call enters, seen by
a debugger: rank 0 of native/engine/probe/coll_call.c runs under gdb with a
breakpoint on every `ompi_coll_base_<coll>_intra_*` function (exported by Open
MPI 4.1 and 5.0; MPICH hides its MPIR_*, so there the check is by time only,
tune/verdicts.py); the first one entered after mpiscope_cell(i) is the algorithm
cell i ran. With the rules file in effect and with each algorithm forced, the
same cell must enter the same function: the library loaded the file and selects
what it says, with no mapping between the file's numbers and its functions."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from mpiscope.mpilibs.gdb_script import call_script

GDB_SCRIPT = call_script(r"""
for coll in COLLS:
    try:
        gdb.execute("rbreak ^ompi_coll_base_%s_intra_" % coll, to_string=True)
    except gdb.error:
        pass
""")


# where Open MPI's collective and point-to-point functions are: libmpi, and
# the components' own objects where they are built as such (Debian's 4.1)
LIBRARIES = [r"/libmpi\.so", r"/mca_coll_", r"/mca_pml_"]


def available(mpi) -> bool:
    """Whether gdb can be run here under the launcher beside the wrapper."""
    return mpi.launcher is not None and shutil.which("gdb") is not None


def entered(
    mpi, probe: Path, np: int, cells: list, mca: dict, colls: list, oversubscribe: bool = True, timeout: int = 300
) -> dict:
    """{(coll, size): the first ompi_coll_base_<coll>_intra_* function entered}
    for `cells` [(coll, size)] on `np` local ranks with MCA parameters `mca`;
    `probe`: native/engine/probe/coll_call.c built with the MPI's wrapper."""
    script = f"LIBRARIES = {LIBRARIES!r}\nCOLLS = {list(colls)!r}\n" + GDB_SCRIPT
    return parse(under_gdb(mpi, probe, np, cells, mca, script, oversubscribe, timeout), cells)


def under_gdb(
    mpi, probe: Path, np: int, cells: list, mca: dict, script: str, oversubscribe: bool = True, timeout: int = 300
) -> str:
    """The probe's output with rank 0 under gdb running `script` (Python), the
    other np - 1 ranks plain, started by the launcher beside the wrapper: one
    call per cell [(coll, size)]."""
    args = [f"{c}:{s}" for c, s in cells]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "probe.py"
        path.write_text(script)
        common = [mpi.launcher]
        if oversubscribe:
            common += ["--oversubscribe", "--bind-to", "none"]
        for k, v in mca.items():
            common += ["--mca", k, v]
        cmd = common + ["-n", "1", "gdb", "-q", "-batch", "-x", str(path), "--args", str(probe), *args]
        if np > 1:
            cmd += [":", "-n", str(np - 1), str(probe), *args]
        env = {**os.environ, "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
        return subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=env, stdin=subprocess.DEVNULL
        ).stdout


def parse(text: str, cells: list) -> dict:
    out = {}
    for m in re.finditer(r"^@call (\d+) (\S+)$", text, re.M):
        i = int(m.group(1))
        if 1 <= i <= len(cells) and cells[i - 1] not in out:
            out[cells[i - 1]] = m.group(2)
    return out
