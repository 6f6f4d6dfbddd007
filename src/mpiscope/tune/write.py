# SPDX-License-Identifier: BSD-3-Clause
"""Writing the library's files: each file its module writes for the table
(mpilibs: selection_files) is read back by our own reader, which must find,
at every cell of every communicator size, the algorithm the table chose
there, before the file is kept; and env.sh, the lines a job adds to use them."""

from __future__ import annotations

import shlex
from pathlib import Path

from mpiscope.common.atomic import write_text
from mpiscope.mpilibs.selection import chosen
from mpiscope.tune.library_sizes import library_size


def write_files(library, catalog, table: dict, sizes_of, outdir: Path) -> dict:
    """Writes the files for `table` {coll: {p: rules}} under `outdir`;
    returns {key: path}. `sizes_of(coll)`: the engine sizes of its cells."""
    written = {}
    for f in library.selection_files(catalog, table):
        for c, by_p in table.items():
            for p, rules in by_p.items():
                for s in sizes_of(c):
                    size = library_size(library, c, s, p)
                    want = chosen(rules, size)
                    expected, got = f.means(c, want), f.selects(c, p, size)
                    if expected is not None and got != expected:
                        raise RuntimeError(f"{f.reader} finds {got} for {c} p={p} {s} B, not {want}")
        write_text(outdir / f.filename, f.text)
        written[f.key] = outdir / f.filename
    return written


def env_lines(library, settings: dict) -> str:
    """env.sh: `settings` (use_settings) as a job script exports them, and on
    the launcher's command line."""
    lines = ["# written by mpiscope tune: add to a job script"]
    exports = library.settings_env(settings)
    if not exports:
        lines.append("# nothing to set: the library's default selection was kept everywhere")
        return "\n".join(lines) + "\n"
    lines += [f"export {k}={shlex.quote(v)}" for k, v in exports.items()]
    lines.append(
        f"# or on the command line: {library.launcher.name} " + shlex.join(library.settings_words(settings)) + " ..."
    )
    return "\n".join(lines) + "\n"
