# SPDX-License-Identifier: BSD-3-Clause
"""An imported run as text (`mpiscope show RUN` of a run `mpiscope import`
stored): per benchmark, each size's value as the tool printed it, with the
tool's minimum and maximum and repetitions where it printed them, and the
line of the file it came from."""

from __future__ import annotations

from mpiscope.common.sizes import format_size
from mpiscope.store.series import bench_label
from mpiscope.views.text import sig, table


def _scaled(value, unit):
    if value is None:
        return "-"
    return sig(value * 1e6) if unit == "s" else sig(value / 1e6)


def format_imported(context, doc) -> str:
    imported = context.get("imported") if isinstance(context.get("imported"), dict) else {}
    head = (
        f"run {context.get('run_id')}  imported  {imported.get('tool')} {imported.get('version') or ''}".rstrip()
        + f"  np={context.get('np') or '?'}  {context.get('created')}\n"
        f"from {imported.get('source')}{' (' + imported['part'] + ')' if imported.get('part') else ''}"
        "; the tool's own summary numbers: no samples, no interval\n"
    )
    parts = [head]
    groups = {}
    for v in doc.get("values") or []:
        groups.setdefault((v["bench"], v["algo"], v["unit"]), []).append(v)
    for (bench, algo, unit), values in groups.items():
        shown = "us" if unit == "s" else "MB/s"
        rows = [
            [
                format_size(v["size"]),
                _scaled(v["value"], unit),
                _scaled(v.get("min"), unit),
                _scaled(v.get("max"), unit),
                "-" if v.get("reps") is None else str(v["reps"]),
                str(v["line"]),
            ]
            for v in values
        ]
        parts.append(
            f"\n{bench_label(bench, algo)}\n"
            + table(["size", shown, "min", "max", "reps", "line"], rows, [True] * 6)
            + "\n"
        )
    for note in doc.get("notes") or []:
        parts.append(f"\nnote: {note}")
    return "".join(parts) + ("\n" if doc.get("notes") else "")
