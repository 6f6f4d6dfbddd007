# SPDX-License-Identifier: BSD-3-Clause
"""What an Intel MPI collective call runs, seen by a debugger: Intel MPI names no
algorithm it selects, but keeps its algorithm functions' symbols. Rank 0 of
native/engine/probe/coll_call.c runs under gdb with a breakpoint on each (MPICH's
MPIR_<Coll>_intra_*/_allcomm_*, Intel's MPIDI_*<Coll>* compositions and
shared-memory collectives) and on the MPIC_* sends, receives and waits; what it
enters after the marker mpiscope_cell(i) is cell i's trace. Every collective's
functions are watched (a preset may run another's), and each cell's second call
is traced (the first sets shared memory up). Equal traces run the same code: so
the default is matched to a preset (read_cells) and the tuned settings proven in
effect (each cell traces as its rule's preset forced)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from mpiscope.mpilibs.algorithm_catalog import COLLECTIVES, DEFAULT
from mpiscope.mpilibs.library import Reading
from mpiscope.mpilibs.mpich.cvars import library_file
from mpiscope.mpilibs.gdb_script import call_script

GDB_SCRIPT = call_script(r"""
for name in FUNCTIONS:
    gdb.execute("break " + name, to_string=True)
""")


# every watched function is Intel MPI's libmpi's
LIBRARIES = [r"/libmpi\.so"]


def _watched_re() -> re.Pattern:
    colls = "|".join(c[0].upper() + c[1:] for c in COLLECTIVES)
    return re.compile(
        rf"^(MPIR_({colls})_(intra|allcomm)_\w+|MPIDI_({colls})_intra_composition_\w+"
        rf"|MPIDI_(POSIX|OFI)_({colls})_\w+|MPIDI_SHMGR_(Gather|Release)\w*|MPIC_\w+)$"
    )


def functions(library: Path) -> list:
    """The functions watched, from the library's symbol table (nm)."""
    p = subprocess.run(["nm", str(library)], capture_output=True, text=True, timeout=120)
    watched = _watched_re()
    names = {
        w[2]
        for w in (line.split() for line in p.stdout.splitlines())
        if len(w) == 3 and w[1] in "tT" and watched.match(w[2])
    }
    return sorted(n for n in names if not n.endswith(("_auto", "_auto_safe", "_check")))


def available(mpi) -> bool:
    """Whether gdb, nm and the launcher beside the wrapper are here."""
    return mpi.launcher is not None and shutil.which("gdb") is not None and shutil.which("nm") is not None


def traces(text: str, cells: list) -> dict:
    """{(coll, size): (function entered, …)} from the script's output for a
    probe given each cell twice: the second call's."""
    out = {}
    for m in re.finditer(r"^@call (\d+) (\S+)$", text, re.M):
        i = int(m.group(1))
        if 1 <= i <= 2 * len(cells) and i % 2 == 0:
            out.setdefault(cells[i // 2 - 1], []).append(m.group(2))
    return {cell: tuple(t) for cell, t in out.items()}


def algorithms(trace: tuple) -> tuple:
    """The algorithm functions of a trace (its point-to-point calls left out)."""
    return tuple(f for f in trace if not f.startswith("MPIC_"))


def shown(trace: tuple) -> str | None:
    """A trace in one line: its algorithm functions in order, then how many of
    each point-to-point call; None when it entered no algorithm function."""
    algs = algorithms(trace)
    if not algs:
        return None
    calls = Counter(f for f in trace if f.startswith("MPIC_"))
    return " > ".join(algs) + (
        " [" + ", ".join(f"{n} {f[len('MPIC_') :]}" for f, n in sorted(calls.items())) + "]" if calls else ""
    )


def run_traced(
    mpi, probe: Path, np: int, cells: list, settings: dict, oversubscribed: dict, timeout: int = 600
) -> dict:
    """{(coll, size): trace} of `cells` [(coll, size)] on np local ranks with
    `settings` (variables), rank 0 under gdb; `oversubscribed`: the settings
    that let ranks share cores, added when np exceeds this machine's CPUs."""
    if not cells:
        return {}
    env_words = []
    extra = oversubscribed if np > len(os.sched_getaffinity(0)) else {}
    for k, v in {**extra, **settings}.items():
        env_words += ["-genv", k, v]
    args = [f"{c}:{s}" for c, s in cells for _ in range(2)]
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "trace.py"
        script.write_text(f"LIBRARIES = {LIBRARIES!r}\nFUNCTIONS = {functions(library_file(probe))!r}\n" + GDB_SCRIPT)
        cmd = [
            mpi.launcher,
            *env_words,
            "-n",
            "1",
            "gdb",
            "-q",
            "-batch",
            "-x",
            str(script),
            "--args",
            str(probe),
            *args,
        ]
        if np > 1:
            cmd += [":", "-n", str(np - 1), str(probe), *args]
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL).stdout
    return traces(out, cells)


def entered(mpi, probe, np, cells, settings, oversubscribed) -> dict:
    """{(coll, size): the trace, shown} of each cell with `settings`."""
    return {
        cell: shown(t) for cell, t in run_traced(mpi, probe, np, cells, settings, oversubscribed).items() if shown(t)
    }


def same_code(traced: dict, names: dict, cells: list) -> Reading:
    """What the default runs and which presets run another's code, from
    `traced` {DEFAULT or name: {cell: trace}} and `names` {coll: [name]} in
    the catalog's order: a configuration whose trace at a cell equals the
    default's runs what the default runs (the first such preset is the
    default's there), else the first earlier preset's it equals. A trace
    without an algorithm function claims nothing."""
    default_runs, runs_as = {}, {}
    for cell in cells:
        coll = cell[0]
        seen = {}  # trace -> the first configuration that ran it
        base = traced.get(DEFAULT, {}).get(cell)
        if base and algorithms(base):
            seen[base] = DEFAULT
        for name in names.get(coll, []):
            t = traced.get(name, {}).get(cell)
            if not t or not algorithms(t):
                continue
            if t in seen:
                runs_as[(*cell, name)] = seen[t]
                if seen[t] == DEFAULT and cell not in default_runs:
                    default_runs[cell] = (name, True)
            else:
                seen[t] = name
    return Reading(default_runs, runs_as)


def read_cells(mpi, probe, catalog, np, cells, names, settings_of, oversubscribed, say=print) -> Reading:
    """The default traced at `cells`, then each preset of `names` {coll:
    [name]}, one launch per preset, no other collective forced;
    `settings_of({coll: Algorithm or None})` the settings of such a launch."""
    colls = sorted({c for c, _ in cells})
    traced = {DEFAULT: run_traced(mpi, probe, np, cells, settings_of({c: None for c in colls}), oversubscribed)}
    todo = [(c, n) for c in colls for n in names.get(c, [])]
    for i, (c, name) in enumerate(todo, 1):
        say(f"  [{i}/{len(todo)}] {c}={name}")
        sub = [cell for cell in cells if cell[0] == c]
        for cell, t in run_traced(mpi, probe, np, sub, settings_of({c: catalog.find(c, name)}), oversubscribed).items():
            traced.setdefault(name, {})[cell] = t
    if not traced[DEFAULT]:
        say("what the default runs could not be read under gdb (nothing traced)")
    return same_code(traced, names, cells)
