# SPDX-License-Identifier: BSD-3-Clause
"""MkDocs hook: the list of benchmarks and collective algorithms, from the
engine's own description (`mpiscope-engine --describe`, the single source of
truth for what can be measured). The marker `<!-- engine-benchmarks -->`
becomes a table of every benchmark; `<!-- engine-algorithms -->` one of our
own collective algorithms. The engine is built by `make setup`."""

from __future__ import annotations

from mkdocs.exceptions import PluginError

MARKERS = ("<!-- engine-benchmarks -->", "<!-- engine-algorithms -->")


def _description():
    from mpiscope.engine.describe import describe

    try:
        return describe("openmpi")
    except Exception as e:  # no engine, no MPI: say what builds it
        raise PluginError(f"the benchmark list needs the engine ('make setup' builds it): {e}")


def _benchmarks(d) -> str:
    rows = ["| benchmark | pattern | one sample | unit | ranks | variants |",
            "|---|---|---|---|---|---|"]
    for b in d.benchmarks.values():
        variants = ", ".join(f"`{v}`" for v in b.variants if v != "mpi")
        if b.variant_option:
            variants = f"{variants or 'our own algorithms'} (`{b.variant_option}`)"
        sizeless = " (no size)" if b.sizeless else ""
        rule = d.rules.get(b.rule, "")
        rows.append(f"| `{b.name}`{sizeless} | {b.pattern} | `{b.rule}`: {rule} | {b.unit} | "
                    f"≥ {b.min_ranks} | {variants or '–'} |")
    return "\n".join(rows)


def _algorithms(d) -> str:
    rows = ["| collective | our own algorithms (`--algo`) |", "|---|---|"]
    for coll, names in d.algorithms.items():
        rows.append(f"| `{coll}` | {', '.join(f'`{n}`' for n in names)} |")
    return "\n".join(rows)


def on_page_markdown(markdown, page, config, files):
    if not any(m in markdown for m in MARKERS):
        return markdown
    d = _description()
    return markdown.replace(MARKERS[0], _benchmarks(d)).replace(MARKERS[1], _algorithms(d))
