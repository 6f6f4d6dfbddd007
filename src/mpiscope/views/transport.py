# SPDX-License-Identifier: BSD-3-Clause
"""Text and JSON of `mpiscope transport advise`."""

from __future__ import annotations

from mpiscope.common.jsonable import plain
from mpiscope.common.documents import json_document
from mpiscope.common.sizes import format_size
from mpiscope.views.text import table

STATE_BENCH = {"warm": "tp_bw", "cold": "tp_bw_cold", "latency": "tp_latency", "late receiver": "tp_skew"}


def _size(v):
    return "never" if v is None else format_size(v)


def _value(v, bench):
    if v is None:
        return "–"
    return f"{v / 1e6:.0f} MB/s" if bench in ("tp_bw", "tp_bw_cold", "tp_multibw") else f"{v * 1e6:.2f} us"


def _ratio(r):
    return "–" if r is None else f"{r:.2f}"


def format_advice(a) -> str:
    runs = ", ".join(f"{r.run_id} ({r.library.split(',')[0].replace(chr(9), ' ')})" for r in a.lab.runs)
    out = [f"runs: {runs}", f"placement classes measured: {', '.join(a.lab.placements())}"]
    for cls in a.lab.placements():
        t = a.thresholds[cls]
        out.append(f"\n== placement {cls} ==")
        out.append("cma: " + ("ran" if t.cma_ok else f"did not run: {t.cma_why}"))
        rows = []
        for state, bench in STATE_BENCH.items():
            x = {c.challenger: c for c in a.crossovers if c.placement == cls and c.state == state}
            cma, adv = x.get("cma"), x.get("advanced")
            rows.append(
                [
                    state,
                    bench,
                    (
                        _size(cma.size)
                        + (
                            f" (copy wins up to {format_size(cma.last_loss)})"
                            if cma.last_loss
                            else " (every size)"
                            if cma.size
                            else ""
                        )
                    )
                    if cma
                    else "not measured",
                    _size(adv.size) if adv else "–",
                ]
            )
        for fam, (first, last) in sorted(a.library.get(cls, {}).items()):
            rows.append(
                [
                    f"MPI: {fam}",
                    "bw, pingpong",
                    _size(first)
                    + (f" (copy wins up to {format_size(last)})" if last else " (every size)" if first else ""),
                    "–",
                ]
            )
        out.append(
            "crossovers (from this size on, at every larger size measured; a size is won only where "
            "compare's test says faster: p < 0.05 and the CI beyond ±2%):"
        )
        out.append(
            table(["state", "bench", "single copy beats the best copy", "advanced beats basic"], rows, [False] * 4)
        )
        for bench in ("tp_latency", "tp_bw"):
            lib_bench = "lib_latency" if bench == "tp_latency" else "lib_bw"
            paths = sorted(a.lab.library_paths(lib_bench, cls).items())
            rows = []
            for r in (r for r in a.best.get(bench, []) if r.placement == cls):
                best = a.lab.get(bench, cls, r.best).cost(r.size)
                libs = [_ratio(c.cost(r.size) / best) if c.cost(r.size) else "–" for _, c in paths]
                rows.append(
                    [
                        format_size(r.size),
                        r.best,
                        _value(r.best_value, bench),
                        _ratio(r.hybrid_ratio),
                        _ratio(r.mpi_ratio),
                        *libs,
                    ]
                )
            if rows:
                out.append(
                    f"best single design per size ({bench}; ratios: cost / the best's; MPI: the "
                    "library's default path in the same run):"
                )
                out.append(
                    table(
                        ["size", "best", "its median", "hybrid", "MPI", *[f"{f} {m}" for (f, m), _ in paths]],
                        rows,
                        [True, False] + [True] * (3 + len(paths)),
                    )
                )
        ov = [r for r in a.overlap if r["placement"] == cls]
        if ov:
            out.append("overlap (tp_overlap: share of the computation the send hid):")
            out.append(
                table(
                    ["design", "size", "send alone", "overlap"],
                    [
                        [
                            r["design"],
                            format_size(r["size"]),
                            f"{r['alone_s'] * 1e6:.2f} us",
                            f"{r['overlap'] * 100:.0f}%",
                        ]
                        for r in ov
                    ],
                    [False, True, True, True],
                )
            )
        out.append("settings (add these lines):")
        for s in a.settings[cls]:
            out.append(f"  {s.library}:")
            out += [f"    {line}" for line in s.lines]
            if s.note:
                out.append(f"    # {s.note}")
    if len(a.lab.placements()) > 1:
        out.append(
            "\nA library takes one value per job: use the settings of the class most of "
            "your pairs are in (ranks bound to cores of one socket: l3 or socket)."
        )
    return "\n".join(out) + "\n"


def advice_json(a, verify=None) -> str:
    """The advise document; `verify`: the --verify part (library, launcher
    words, comparison document) when it ran."""
    doc = plain(a.to_dict())
    if verify is not None:
        doc["verify"] = plain(verify)
    return json_document("transport-advise", doc) + "\n"


def probe_json(p: dict) -> str:
    return json_document("transport-probe", p) + "\n"


_SHORT = {"advised faster": "+", "advised slower": "-", "same": "=", "insufficient": "?"}


def _num(x):
    return "–" if x is None or x != x else f"{x:.2f}"  # NaN: not judged


def format_verify(v: dict) -> str:
    """--verify: per pass the launches in their order, then per benchmark ×
    size the speedup of the settings with its interval and the verdict; the
    rules withdrawn and the settings left."""
    passes = v.get("passes") or [v]
    out = [_format_pass(v["library"], p, v["min_samples"], k, len(passes)) for k, p in enumerate(passes)]
    for w in v.get("withdrawn") or []:
        why = ", ".join(f"{r['bench']} {format_size(r['size'])} ({_num(r['speedup'])})" for r in w["because"])
        words = " ".join(w["launcher_args"]) or " ".join(f"{k}={x}" for k, x in w["env"].items())
        out.append(f"withdrawn: {w['name']} ({words}): slower beyond noise at {why}")
    if "final" in v:
        out.append("settings after verification (never slower than the defaults beyond noise in their own pass):")
        out += [f"  {line}" for line in v["final"]["lines"]]
    return "\n".join(out) + "\n"


def _format_pass(library, v, min_samples, k, n) -> str:
    order = " ".join(("D" if x["side"] == "defaults" else "A") + f"={x['run']}" for x in v["launches"])
    rows = [
        [
            r["bench"],
            format_size(r["size"]),
            f"{r['n_defaults']}/{r['n_advised']}",
            _num(r["speedup"]),
            f"[{_num(r['speedup_low'])}, {_num(r['speedup_high'])}]",
            _num(r["p_value"]),
            " ".join(_SHORT.get(x, x) for x in r["rounds"]) or "–",
            r["verdict"],
        ]
        for r in v["rows"]
    ]
    counts = {
        k: sum(r["verdict"] == k for r in v["rows"])
        for k in ("advised faster", "same", "advised slower", "insufficient")
    }
    out = [
        f"\nverify ({library}){f', pass {k + 1} of {n}' if n > 1 else ''}: D = the defaults, "
        f"A = the {'advised' if k == 0 else 'remaining'} settings "
        f"({' '.join(v['launcher_args'])}), launched alternately: {order}",
        table(
            ["bench", "size", "n D/A", "speedup", "95% CI", "p", "rounds", "verdict"],
            rows,
            [False, True, True, True, True, True, False, False],
        ),
        "speedup > 1: the advised settings are faster (time D/A, bandwidth A/D); a verdict needs "
        "p < 0.05 and the whole CI outside 1 ± 2% on the pooled samples, the same verdict in every "
        f"round alone (+ faster, - slower, = same, ? insufficient), and at least {min_samples} "
        "samples a side (else: insufficient, nothing claimed)",
        "verdicts: " + ", ".join(f"{k} {n}" for k, n in counts.items()),
    ]
    return "\n".join(out)
