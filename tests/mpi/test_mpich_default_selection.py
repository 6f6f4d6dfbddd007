# SPDX-License-Identifier: BSD-3-Clause
"""MPICH's default runs the MPIR algorithm read from its own selection trees
(mpilibs/mpich/default_selection.py). Four ranks of Debian's MPICH are
launched as four nodes (MPIR_CVAR_NUM_CLIQUES), as on an emulated cluster
with one rank per host: the communicator is flat and every message goes
through UCX. Rank 0 runs under gdb, which records the length of each
ucp_tag_send_nbx and ucp_tag_recv_nbx in each cell: MPICH hides its algorithm
functions, UCX's are exported. The default's messages must be those of the
algorithm read, forced, and differ from another algorithm's."""

import re
import subprocess
import tempfile
from pathlib import Path

from mpiscope import mpilibs
from mpiscope.engine.mpi import identify
from mpiscope.mpilibs.algorithm_catalog import Algorithm, Catalog
from mpiscope.tune import probes

CELLS = [("allreduce", 1024), ("bcast", 65536)]
# MPICH 4.0's algorithms of each, which at these cells send differently
NAMES = {
    "allreduce": ("recursive_doubling", "reduce_scatter_allgather"),
    "bcast": ("binomial", "scatter_recursive_doubling_allgather"),
}

GDB = r"""
import gdb
for setting in ("pagination off", "confirm off", "auto-load off", "auto-solib-add off"):
    gdb.execute("set " + setting)
gdb.execute("break mpiscope_cell")
gdb.execute("run")
gdb.execute("sharedlibrary libucp", to_string=True)
gdb.execute("break ucp_tag_send_nbx", to_string=True)
gdb.execute("break ucp_tag_recv_nbx", to_string=True)
cell = int(gdb.parse_and_eval("(int)$rdi"))
while cell != 0:
    gdb.execute("continue", to_string=True)
    name = gdb.selected_frame().name() or ""
    if name == "mpiscope_cell":
        cell = int(gdb.parse_and_eval("(int)$rdi"))
    else:  # (endpoint or worker, buffer, length, tag, parameters)
        print("@ev %d %s %d" % (cell, name[len("ucp_tag_"):], int(gdb.parse_and_eval("(long)$rdx"))))
gdb.execute("delete")
gdb.execute("continue", to_string=True)
"""


def messages(probe: Path, settings: dict) -> dict:
    """{cell: rank 0's UCX sends and receives, with their lengths, in order}."""
    args = [f"{c}:{s}" for c, s in CELLS]
    words = [w for k, v in {"MPIR_CVAR_NUM_CLIQUES": "4", **settings}.items() for w in ("-genv", k, v)]
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "ucp.py"
        script.write_text(GDB)
        cmd = ["mpiexec.hydra", *words, "-n", "1", "gdb", "-q", "-batch", "-x", str(script), "--args", str(probe)]
        cmd += [*args, ":", "-n", "3", str(probe), *args]
        text = subprocess.run(cmd, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL).stdout
    out = {cell: [] for cell in CELLS}
    for m in re.finditer(r"^@ev (\d+) (\w+ \d+)$", text, re.M):
        out[CELLS[int(m.group(1)) - 1]].append(m.group(2))
    assert all(out.values()), f"no UCX call seen in a cell:\n{text[-2000:]}"
    return out


def test_the_default_sends_what_the_algorithm_read_sends():
    mpi = identify("/usr/bin/mpicc.mpich")
    library = mpilibs.get("mpich")
    algorithms = {c: [Algorithm(n, n, f"MPIR_{c.capitalize()}_intra_{n}") for n in ns] for c, ns in NAMES.items()}
    catalog = Catalog("mpich", mpi.version, algorithms, "test", device_override=True)
    reading = library.selected_defaults(mpi, lambda t: probes.build(mpi, t), catalog, [1, 1, 1, 1], CELLS)
    read = {cell: name for cell, (name, _) in reading.default_runs.items()}
    assert set(read) == set(CELLS)
    probe = probes.build(mpi, "collcall")
    default = messages(probe, {})
    # the k-th algorithm of every collective forced in one launch
    forced = [
        messages(probe, library.forcing(catalog, {c: catalog.find(c, ns[k]) for c, ns in NAMES.items()}))
        for k in range(2)
    ]
    for cell in CELLS:
        k = NAMES[cell[0]].index(read[cell])
        assert default[cell] == forced[k][cell], (cell, read[cell], default[cell])
        assert forced[1 - k][cell] != default[cell], cell  # the messages tell the two apart
