# SPDX-License-Identifier: BSD-3-Clause
"""The JSON document every bench script writes with `--json FILE`: what was
measured, on which machine and MPI, at which commit, with which options, and
the tables the script printed. The documentation's validation pages render
their tables from these files (scripts/docs/validation_data.py), so a page
shows exactly what a run of the script measured.

Also what every bench script's command line shares: its parser (the module
docstring as the help, the command that reproduces it last, --json), printing
a table exactly as it is stored, and the line for a peer tool not given.

    {"schema_version": 1, "bench": "harness_overhead",
     "context": {"date", "commit", "dirty", "command", "options", "machine",
                 "mpi", "python", "mpiscope"},
     "tables": [{"title", "columns", "rows", "notes"}],
     "results": {...}}            # the script's own numbers, whole
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import fcntl
import json
import os
import platform
import shlex
import subprocess
import sys
from pathlib import Path

SCHEMA_VERSION = 1
REPO = Path(__file__).resolve().parent.parent


def add_json_option(parser) -> None:
    """`--json FILE` on a bench script's parser."""
    parser.add_argument("--json", metavar="FILE", type=Path,
                        help="also write the results, the tables printed and their context "
                             "(machine, MPI, commit, date, options) as JSON to FILE")


def parser(doc: str) -> argparse.ArgumentParser:
    """A bench script's parser: its module docstring is the help's description,
    kept as written, except that the paragraph from "To reproduce" on (the
    command lines) is printed last, after the options; with --json FILE."""
    head, mark, tail = doc.partition("\nTo reproduce")
    ap = argparse.ArgumentParser(description=head.strip(), epilog=(mark + tail).strip() or None,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_json_option(ap)
    return ap


@contextlib.contextmanager
def held(lock: Path | None):
    """An exclusive flock on `lock` while the block runs (nothing without one),
    so that MPI jobs of other users of the lock never run beside a trial."""
    if lock is None:
        yield
        return
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def count(low, high):
    """An argparse type: a whole number from `low` to `high`."""
    def parse(text):
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"'{text}' is not a whole number") from None
        if not low <= n <= high:
            raise argparse.ArgumentTypeError(f"{n} is outside {low}..{high}")
        return n
    return parse


def parse(ap, argv=None):
    """The options, with --json FILE checked before anything is measured."""
    args = ap.parse_args(argv)
    check_json_path(ap, args)
    return args


def check_json_path(parser, args) -> None:
    """Refuse an unwritable --json FILE before anything is measured (exit 2)."""
    if args.json is None:
        return
    parent = args.json.resolve().parent
    if args.json.is_dir() or not parent.is_dir() or not os.access(parent, os.W_OK):
        parser.error(f"--json {args.json}: not a file in a writable directory; "
                     "name a file in a directory that exists")


def table(title: str, columns, rows, notes=()) -> dict:
    """One printed table: a title, column names, rows of values (numbers kept
    as numbers) and notes that say how to read it."""
    return {"title": title, "columns": list(columns), "rows": [list(r) for r in rows],
            "notes": list(notes)}


def records(t: dict) -> list[dict]:
    """A table's rows as {column: value}: results for a script whose tables
    hold all its numbers."""
    return [dict(zip(t["columns"], row)) for row in t["rows"]]


def print_table(t: dict, file=None) -> None:
    """A table as aligned text, for the terminal (standard output by default)."""
    file = file or sys.stdout
    cells = [[_cell(v) for v in row] for row in [t["columns"], *t["rows"]]]
    widths = [max(len(r[i]) for r in cells) for i in range(len(t["columns"]))]
    # columns of numbers right-aligned (their names too), columns of text left
    numeric = [any(isinstance(r[i], (int, float)) and not isinstance(r[i], bool)
                   for r in t["rows"]) for i in range(len(t["columns"]))]
    print(t["title"], file=file)
    for row in cells:
        print("  " + "  ".join(c.rjust(w) if num else c.ljust(w)
                               for c, w, num in zip(row, widths, numeric)).rstrip(), file=file)
    for note in t["notes"]:
        print(f"  {note}", file=file)


def show(title: str, columns, rows, notes=(), file=None) -> dict:
    """A table built, printed (with a blank line after it) and returned, so
    that what is printed and what --json stores are the same numbers."""
    file = file or sys.stdout
    t = table(title, columns, rows, notes)
    print_table(t, file=file)
    print(file=file, flush=True)
    return t


def skipped(tool: str, option: str) -> str:
    """The line printed when a peer tool's path was not given (or is not a
    program): the script goes on with the rest."""
    line = f"skipped: {tool} not given ({option} PATH)"
    print(line, flush=True)
    return line


def _cell(v) -> str:
    if v is None or (isinstance(v, float) and v != v):  # None, NaN
        return "-"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e5 else f"{v:.3e}"
    return str(v)


def machine() -> dict:
    """The CPU, cores, memory, kernel and operating system of this machine."""
    info = {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "kernel": platform.release(), "os": platform.system()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                info["memory_gib"] = round(int(line.split()[1]) / 2**20, 1)
                break
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                info["os"] = line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    virt = subprocess.run(["systemd-detect-virt"], capture_output=True, text=True) \
        if _which("systemd-detect-virt") else None
    if virt is not None and virt.returncode == 0:
        info["virtualization"] = virt.stdout.strip()
    return info


def _which(program: str) -> bool:
    import shutil

    return shutil.which(program) is not None


def _git(*args) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def mpi_names(*wrappers) -> list[str]:
    """'Open MPI 4.1.4' and the like, for the MPIs named by their wrappers."""
    from mpiscope.engine.mpi import identify

    return [identify(w).name for w in wrappers]


def default_mpi() -> list[str]:
    """The MPI `mpiscope run` uses when none is named ($MPISCOPE_MPICC or the
    first installed of Open MPI, MPICH)."""
    from mpiscope.engine.mpi import find_mpi

    return [find_mpi().name]


def context(args, mpi=()) -> dict:
    """Where and how the numbers were measured: enough to measure them again."""
    import mpiscope

    script = Path(sys.argv[0]).resolve()
    try:
        script = script.relative_to(REPO)
    except ValueError:
        pass
    options = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()
               if k != "json"}
    return {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "commit": _git("rev-parse", "HEAD"), "dirty": bool(_git("status", "--porcelain",
                                                                    "--untracked-files=no")),
            "command": shlex.join([".venv/bin/python", str(script), *sys.argv[1:]]),
            "options": options, "machine": machine(), "mpi": list(mpi),
            "python": platform.python_version(), "mpiscope": mpiscope.__version__}


def write(args, bench: str, tables, results=None, mpi=()) -> None:
    """Write the document to args.json (when given), whole or not at all."""
    if getattr(args, "json", None) is None:
        return
    from mpiscope.common.atomic import write_text
    from mpiscope.common.jsonable import plain

    doc = {"schema_version": SCHEMA_VERSION, "bench": bench, "context": context(args, mpi),
           "tables": list(tables), "results": results if results is not None else {}}
    write_text(args.json, json.dumps(plain(doc), indent=1, default=str) + "\n")
