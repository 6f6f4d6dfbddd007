# SPDX-License-Identifier: BSD-3-Clause
"""MkDocs hook: a validation page's numbers, rendered from the JSON file a
bench script wrote with --json (bench/benchjson.py) and committed beside the
page. The marker

    <!-- bench-data: harness-overhead.json -->

becomes the run's context (machine, MPI, date, commit), the command that
reproduces it, and every table the script printed. Building the site never
runs a benchmark; a marker naming a missing or malformed file fails the build."""

from __future__ import annotations

import json
import re
from pathlib import Path

from mkdocs.exceptions import PluginError

MARKER = re.compile(r"<!--\s*bench-data:\s*(\S+)\s*-->")
CONTEXT_KEYS = ("date", "commit", "command", "machine", "mpi", "options")


def load(path: Path) -> dict:
    """A bench document, checked to hold what a page shows."""
    try:
        doc = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise PluginError(f"{path}: cannot read the bench data ({e})") from None
    missing = [k for k in CONTEXT_KEYS if k not in doc.get("context", {})]
    if missing or not doc.get("tables"):
        raise PluginError(f"{path}: not a bench document with context and tables "
                          f"(missing: {', '.join(missing) or 'tables'})")
    return doc


def _cell(v) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1e5 else f"{v:.3e}"
    return str(v).replace("|", r"\|")


def render(doc: dict) -> str:
    ctx = doc["context"]
    m = ctx["machine"]
    machine = f"{m.get('cpu', '?')}, {m.get('cores', '?')} cores"
    if m.get("memory_gib"):
        machine += f", {m['memory_gib']:g} GiB"
    if m.get("virtualization"):
        machine += f" ({m['virtualization']} guest)"
    machine += f"; {m.get('os', '?')}, Linux {m.get('kernel', '?')}"
    dirty = " (with uncommitted changes)" if ctx.get("dirty") else ""
    lines = ["| measured | |", "|---|---|",
             f"| command | `{ctx['command']}` |",
             f"| machine | {machine} |",
             f"| MPI | {', '.join(ctx['mpi']) or 'none'} |",
             f"| date | {ctx['date']} |",
             f"| commit | `{(ctx['commit'] or 'unknown')[:12]}`{dirty} |", ""]
    for t in doc["tables"]:
        lines += [f"**{t['title']}**", "",
                  "| " + " | ".join(map(str, t["columns"])) + " |",
                  "|" + "---|" * len(t["columns"])]
        lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in t["rows"]]
        lines += [""] + [f"{note}  " for note in t.get("notes", [])] + [""]
    return "\n".join(lines)


def on_page_markdown(markdown, page, config, files):
    def expand(match):
        path = Path(config["docs_dir"]) / Path(page.file.src_uri).parent / match.group(1)
        return render(load(path))

    return MARKER.sub(expand, markdown)
