# SPDX-License-Identifier: BSD-3-Clause
"""The gdb Python script that tells which function each cell of
native/engine/probe/coll_call.c enters, for the libraries whose module reads
a call under a debugger (openmpi/calls.py, openmpi/defaults.py,
intelmpi/calls.py): each adds its own breakpoints and the libraries whose
symbols it needs (LIBRARIES)."""

from __future__ import annotations

# Every script's start. gdb reads the symbols of no library by itself (nor
# libthread_db, nor auto-load scripts): reading those of every library
# MPI_Init opens would slow every launch. load_symbols() reads the MPI's own
# (LIBRARIES, regular expressions on their paths) once they are loaded.
PRELUDE = r"""
import gdb
gdb.execute("set pagination off")
gdb.execute("set print thread-events off")
gdb.execute("set confirm off")
gdb.execute("set auto-load off")
gdb.execute("set auto-solib-add off")


def load_symbols():
    for pattern in LIBRARIES:
        gdb.execute("sharedlibrary " + pattern, to_string=True)
"""

# After the last cell: no breakpoint left, the probe runs on through
# MPI_Finalize, and the launch ends sooner than with a killed rank 0.
FINISH = r"""
gdb.execute("delete")
try:
    gdb.execute("continue", to_string=True)
except gdb.error:
    pass
"""


def call_script(breakpoints: str) -> str:
    """A gdb Python script that runs the probe to main, sets its breakpoints
    (`breakpoints`, Python lines using gdb), then prints "@call CELL
    FUNCTION" for each breakpoint hit after the marker mpiscope_cell(CELL),
    until cell 0. The script's first line must set LIBRARIES (PRELUDE)."""
    return (
        PRELUDE
        + r"""
gdb.execute("break main")
gdb.execute("run")
load_symbols()
"""
        + breakpoints
        + r"""
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
"""
        + FINISH
    )
