# SPDX-License-Identifier: BSD-3-Clause
"""The text of `mpiscope tune`: the winner map, the rules written, the
change-over points (measured, and the cost models'), and the verification
(per cell the speedup default/tuned with its 95% CI, the geometric mean,
cells slower beyond noise, the selection check)."""

from __future__ import annotations

from mpiscope.common.sizes import format_size
from mpiscope.views.text import sig, table


def _us(s):
    return sig(None if s is None else s * 1e6, 4)


def _verdict(x) -> str:
    """A per-cell verdict the correction for the number of cells took back is shown beside it."""
    per_cell = x.get("verdict_per_cell")
    return x["verdict"] + (f" ({per_cell} uncorrected)" if per_cell else "")


def format_tune(r: dict) -> str:
    ps = r.get("ps") or [r["p"]]
    out = [
        f"{r['library']} {r['version']}, {', '.join(map(str, ps))} ranks"
        + (f", {r['ppn']} per node" if r.get("ppn") else "")
        + (f", cluster {r['cluster']}" if r.get("cluster") else "")
    ]
    if r["excluded_components"]:
        out.append(f"coll components above tuned left out: {', '.join(r['excluded_components'])}")
    c = r["cells"]
    out.append(
        (f"{r['search']} search: " if r.get("search") else "")
        + f"cells measured: {c['measured']} of the exhaustive grid's {c['exhaustive']} "
        f"({100 * c['measured'] / max(c['exhaustive'], 1):.0f}%)"
        + (
            f"; {c['same_as_default']} given the default's launches (it runs that algorithm there)"
            if c.get("same_as_default")
            else ""
        )
        + (f"; {c['same_code']} given another algorithm's launches (the same code there)" if c.get("same_code") else "")
        + (f"; {c['skipped_by_models']} left out by the cost models" if c.get("skipped_by_models") else "")
        + (f"; {c['out_of_reach']} out of reach of a verdict against the default" if c.get("out_of_reach") else "")
    )
    out.append("")
    units = {x.get("unit") for d in r["decisions"] for x in d["rows"] if "verdict" in x}
    out.append(
        "winner per size (verdict against the default, "
        + (
            "with the launch as the unit"
            if units == {"launch"}
            else "on pooled samples (one launch each)"
            if units == {"sample"}
            else "over launches where there were two or more"
        )
        + "; 'default' where no algorithm is faster beyond noise):"
    )
    lines = []
    for d in r["decisions"]:
        best = min(d["rows"], key=lambda x: x["median_s"], default=None)
        lines.append(
            [
                d["collective"],
                str(d.get("p", r["p"])),
                format_size(d["size"]),
                d["winner"],
                "yes" if d["measured"] else "inherited",
                best["algorithm"] if best else "-",
                _us(best["median_s"] if best else None),
            ]
        )
    out.append(
        table(
            ["collective", "ranks", "size", "winner", "measured", "lowest median", "µs"],
            lines,
            [False, True, True, False, False, False, True],
        )
    )
    out.append("")
    out.append("rules written (first library size: algorithm; sizes as the library means them):")
    for coll, by_p in r["rules"].items():
        for p, rules in by_p.items():
            text = ", ".join(f"{x['start']}: {x['algorithm']}" for x in rules)
            out.append(f"  {coll} p={p} [{r['sizes'][coll]}]  {text}")
        cost = r["bound"]["cost"].get(coll)
        if cost:
            worst = max(cost, key=lambda x: x["slowdown"])
            out.append(
                f"    the bound of {r['bound']['max_rules']} rules costs up to "
                f"{100 * (worst['slowdown'] - 1):.1f}% at library size {worst['library_size']}"
                + (f" (p={worst['p']})" if "p" in worst else "")
            )
    out.append("")
    for coll, by in r["changeovers"].items():
        for p, ch in by["by_p"].items():
            m = "; ".join(f"{x['from']} → {x['to']} at {format_size(x['size'])}" for x in ch["measured"]) or "none"
            out.append(f"change-overs {coll} p={p}: measured {m}")
            if ch.get("library") is not None:  # read under gdb (tuner.changeovers)
                first = min(
                    (x["size"], x["algorithm"])
                    for x in r["default_runs"]
                    if x["collective"] == coll and str(x["p"]) == p
                )
                lib = "; ".join(f"{x['from']} → {x['to']} at {format_size(x['size'])}" for x in ch["library"]) or "none"
                out.append(f"  the library's default (read under gdb): {first[1]} from {format_size(first[0])}; {lib}")
            if ch.get("model") is not None:
                mm = "; ".join(f"{x['from']} → {x['to']} at {format_size(x['size'])}" for x in ch["model"]) or "none"
                out.append(f"  cost models (Hockney, same algorithms): {mm}")
    same = same_code_lines(r)
    if same:
        out += ["", "read under gdb, the same code as another choice (measured once):"]
        out += ["  " + x for x in same]
    v = r["verification"]
    out.append("")
    vunits = {x.get("unit") for x in v["cells"] if x.get("unit")}
    out.append(
        "verification: default and tuned launched alternately"
        + ("; intervals over launches" if vunits == {"launch"} else "")
    )
    lines = []
    for x in v["cells"]:
        ci = f"[{sig(x['speedup_low'], 3)}, {sig(x['speedup_high'], 3)}]" if x.get("speedup") else ""
        lines.append(
            [
                x["collective"],
                str(x["p"]),
                format_size(x["size"]),
                x["rule"],
                _us(x.get("median_default_s")),
                _us(x.get("median_tuned_s")),
                sig(x.get("speedup"), 3),
                ci,
                _verdict(x),
                x.get("selection_check", ""),
            ]
        )
    out.append(
        table(
            [
                "collective",
                "ranks",
                "size",
                "rule",
                "default µs",
                "tuned µs",
                "speedup",
                "95% CI",
                "verdict",
                "tuned = forced?",
            ],
            lines,
            [False, True, True, False, True, True, True, False, False, False],
        )
    )
    out.append(
        "verdicts corrected for the number of cells (Holm; the cells with a rule and "
        "those keeping the default are two families sharing --alpha)"
    )
    out.append(f"geometric mean of default/tuned: {sig(v['geomean_speedup'], 3)}")
    slower = v["slower_beyond_noise"]
    out.append(
        "cells slower beyond noise: "
        + (", ".join(f"{x['collective']} {format_size(x['size'])} ({sig(x['speedup'], 3)})" for x in slower) or "none")
    )
    gdb = [x for x in v["cells"] if x.get("library_selects")]
    if gdb:
        out.append("the library's own algorithm function per cell (gdb), with the file / expected:")
        for x in gdb:
            mark = "ok" if x["library_selects"] == x.get("expected") else "MISMATCH"
            out.append(
                f"  {x['collective']} p={x['p']} {format_size(x['size'])}: {x['library_selects']} / "
                f"{x.get('expected')}  {mark}"
            )
    how = (
        "every cell enters the function its rule names"
        if gdb
        else "most tuned cells run at their forced algorithm's time, not the default's"
    )
    effect = {
        True: f"yes: {how}",
        False: "NO: the library does not select what the file says"
        if gdb
        else "doubtful: most tuned cells run at the default's time",
        None: "nothing to tell by (no rule names an algorithm faster than the default)",
    }
    out.append(f"file in effect: {effect[v['file_in_effect']]}")
    for d in v.get("disturbed_launches", []):
        out.append(
            f"set aside and launched again: the {d['kind']} launch {d['run']} (p={d['p']}), "
            f"which ran its cells {sig(d['factor'], 3)}× slower than the other "
            f"{d['kind']} launches"
        )
    for w in r["withdrawn"]:
        out.append(
            f"withdrawn: {w['collective']} p={w.get('p', r['p'])} {format_size(w['size'])} {w['algorithm']} "
            f"(speedup {sig(w['speedup'], 3)})"
        )
    if r.get("weighted"):
        w = r["weighted"]
        out.append(
            f"application (weights): {_us(w['before_s'])} µs in collectives before, "
            f"{_us(w['after_s'])} µs after ({sig(w['speedup'], 3)}×)"
        )
    own = r.get("own_algorithms") or []
    if own:
        beats = [x for x in own if x["own_beats_library"]]
        out.append(
            "our own algorithms against the library's best: "
            + (
                "; ".join(
                    f"{x['collective']} {format_size(x['size'])}: {x['best_own']} {sig(x['speedup'], 3)}× "
                    f"[{sig(x['speedup_low'], 3)}, {sig(x['speedup_high'], 3)}] faster than "
                    f"{x['best_library']}"
                    for x in beats
                )
                or "none beats every library algorithm"
            )
        )
    out.append("")
    for k, path in r["files"].items():
        out.append(f"file ({k}): {path}")
    out.append(f"job script lines: {r['env']}")
    if r["failures"] or v["failures"]:
        for what, why in r["failures"] + v["failures"]:
            out.append(f"failed launch ({what}): {why}")
    return "\n".join(out)


def same_code_lines(r: dict) -> list:
    """The forced algorithms that run another configuration's code, read under
    gdb (mpilibs/openmpi/defaults.py): one line per algorithm, its sizes as runs
    of the grid."""
    grid = {}
    for d in r["decisions"]:
        grid.setdefault((d["collective"], d["p"]), []).append(d["size"])
    by = {}
    for x in r.get("runs_as", []):
        by.setdefault((x["collective"], x["p"], x["algorithm"], x["runs"]), []).append(x["size"])
    lines = []
    for (coll, p, name, runs), sizes in by.items():
        sizes, spans = sorted(sizes), []
        order = sorted(grid.get((coll, p), sizes))
        for s in sizes:
            if spans and order.index(s) == order.index(spans[-1][1]) + 1:
                spans[-1][1] = s
            else:
                spans.append([s, s])
        where = ", ".join(format_size(a) if a == b else f"{format_size(a)}–{format_size(b)}" for a, b in spans)
        lines.append(f"{coll} p={p}: forcing {name} runs {runs}'s code at {where}")
    return lines
