# SPDX-License-Identifier: BSD-3-Clause
"""Text and JSON of `mpiscope sim run|predict|check|whatif`: microseconds in the
text (milliseconds for an application's time in whatif), seconds in the JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mpiscope.common.sizes import format_size
from mpiscope.common.documents import json_document
from mpiscope.views.text import sig, table, us

if TYPE_CHECKING:  # types only: `sim run` need not load the check's statistics
    from mpiscope.app.scale import WhatIf
    from mpiscope.sim.check import SimCheck
    from mpiscope.sim.costs import SimCosts
    from mpiscope.sim.predict import Ranked
    from mpiscope.sim.simulate import SimAnswer


# ----------------------------------------------------------------------- run


def run_document(schedule, costs: SimCosts, ans: SimAnswer, doc: dict) -> dict:
    """`sim run`'s JSON fields, from the simulator's answer `doc` on `schedule`."""
    return {
        "schedule": str(schedule),
        "costs": costs.to_dict(),
        **ans.to_dict(),
        "nranks": doc["nranks"],
        "nops": doc["nops"],
        "messages": doc["replicates"][0]["messages"],
        "unexpected": doc["replicates"][0]["unexpected"],
        "rendezvous": doc["replicates"][0]["rendezvous"],
        "makespans_s": ans.replicates,
        "simulate_s": doc["simulate_s"],
        "peak_rss_bytes": doc["peak_rss_bytes"],
        "critical_path": doc.get("critical_path", []),
    }


def run_json(out: dict) -> str:
    return json_document("sim-run", out)


def format_run(out: dict, chart=None) -> str:
    """`sim run`'s text from its JSON fields (run_document); `chart`: the time chart written."""
    replicates = out["makespans_s"]
    lines = [
        f"{out['schedule']}: {out['nranks']} ranks, {out['nops']} operations, {out['messages']} messages "
        f"({out['unexpected']} unexpected, {out['rendezvous']} by rendezvous); costs: {out['costs']['source']}",
        f"finish time: median {us(out['median_s'])} µs over {len(replicates)} replicate(s)"
        + (f", 95% prediction interval [{us(out['low_s'])}, {us(out['high_s'])}] µs" if len(replicates) > 1 else ""),
        f"simulated {out['events']} events in {out['simulate_s']:.3g} s ({out['events_per_s'] / 1e6:.3g} M events/s)",
    ]
    if out["critical_path"]:
        lines.append("critical path, last operation first:")
        rows = [
            [
                str(c["rank"]),
                str(c["index"]),
                c["op"],
                "" if c["peer"] < 0 else str(c["peer"]),
                sig(c["value"]),
                us(c["start_s"]),
                us(c["end_s"]),
            ]
            for c in out["critical_path"]
        ]
        lines.append(
            table(
                ["rank", "op#", "op", "peer", "bytes", "start (us)", "end (us)"],
                rows,
                [True, True, False, True, True, True, True],
            )
        )
    if chart:
        lines.append(f"wrote {chart}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------- predict


@dataclass
class SimPrediction:
    """What `sim predict` found for one collective on p ranks: the algorithms
    ranked at one size, and/or the best one from `span`'s first size on and
    the sizes where it changes."""

    bench: str
    p: int
    costs: SimCosts
    replicates: int
    size: int | None = None
    ranked: list[Ranked] = field(default_factory=list)
    span: tuple[int, int] | None = None
    best_at_start: str | None = None
    crossovers: list[tuple[int, str, str]] = field(default_factory=list)  # (size, best below, best from it)


def predict_json(x: SimPrediction) -> str:
    doc = {"bench": x.bench, "p": x.p, "costs": x.costs.to_dict(), "replicates": x.replicates}
    if x.size is not None:
        doc["size"] = x.size
        doc["predictions"] = [{"algo": r.algo, **r.answer.to_dict()} for r in x.ranked]
    if x.span is not None:
        doc["best_at_start"] = x.best_at_start
        doc["crossovers"] = [{"size": s, "from": a, "to": b} for s, a, b in x.crossovers]
    return json_document("sim-predict", doc)


def format_predict(x: SimPrediction) -> str:
    out = [f"{x.bench} on {x.p} ranks, simulated; costs: {x.costs.source}"]
    if x.size is not None:
        best = x.ranked[0].answer.median
        out.append(
            f"size {format_size(x.size)} ({x.size} B), {x.replicates} replicate(s); interval: 95% of the replicates"
        )
        out.append(
            table(
                ["rank", "algorithm", "median (us)", "low (us)", "high (us)", "x best", "regime"],
                [
                    [
                        str(i),
                        r.algo,
                        us(r.answer.median),
                        us(r.answer.low),
                        us(r.answer.high),
                        f"{r.answer.median / best:.2f}" if best > 0 else "-",
                        r.answer.regime,
                    ]
                    for i, r in enumerate(x.ranked, 1)
                ],
                [True, False, True, True, True, True, False],
            )
        )
    if x.span is not None:
        lo, hi = x.span
        out.append(f"best algorithm from {format_size(lo)} B to {format_size(hi)} B (simulated):")
        out.append(
            table(
                ["from size (B)", "best", ""],
                [[str(lo), x.best_at_start, ""]] + [[str(s), b, f"(was {a})"] for s, a, b in x.crossovers],
                [True, False, False],
            )
        )
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------- check


def check_json(res: SimCheck) -> str:
    return json_document("sim-check", res.to_dict())


def format_check(res: SimCheck) -> str:
    out = [
        f"run {res.run_id}: {res.p} ranks; costs: {res.costs.source}"
        + ("; message times drawn from its distributions" if res.sampled else "")
    ]
    rows = [
        [
            r.bench,
            r.algo,
            str(r.size),
            str(r.n),
            us(r.measured),
            us(r.simulated),
            f"[{us(r.low)}, {us(r.high)}]",
            "-" if r.error is None else f"{100 * r.error:+.1f}%",
        ]
        for r in res.rows
    ]
    out.append(
        table(
            ["bench", "algorithm", "size(B)", "n", "measured (us)", "simulated (us)", "interval", "error"],
            rows,
            [False, False, True, True, True, True, False, True],
        )
    )
    out.append(f"simulated within 15% of measured: {100 * res.within(0.15):.0f}% of cells")
    rk = res.rankings()
    if rk:
        out.append("rankings (Kendall τ between measured and simulated order):")
        out.append(
            table(
                ["bench", "size(B)", "algorithms", "τ", "best measured", "best simulated"],
                [
                    [
                        r["bench"],
                        str(r["size"]),
                        str(r["algos"]),
                        "-" if r["kendall_tau"] is None else f"{r['kendall_tau']:.2f}",
                        r["best_measured"],
                        r["best_simulated"],
                    ]
                    for r in rk
                ],
                [False, True, True, True, False, False],
            )
        )
    return "\n".join(out) + "\n"


# -------------------------------------------------------------------- whatif


def whatif_json(w: WhatIf) -> str:
    return json_document("sim-whatif", w.to_dict())


def _ms(span) -> str:
    return f"{sig(span.median_s * 1e3)} [{sig(span.low_s * 1e3)}, {sig(span.high_s * 1e3)}]"


def _selection_rows(selections) -> list:
    """One row per collective, communicator size and choice; consecutive sizes with the same choice merged."""
    rows, last = [], None
    for s in selections:
        key = (s.collective, s.p, s.default, s.tuned, s.ours_default, s.ours_tuned, s.note)
        if key == last:
            rows[-1][2] = f"{rows[-1][2].split('-')[0]}-{s.size}"
            continue
        rows.append(
            [
                s.collective,
                str(s.p),
                str(s.size),
                s.default or "?",
                s.tuned or "?",
                s.ours_default or "as traced",
                s.ours_tuned or "as traced",
                s.note,
            ]
        )
        last = key
    return rows


def eager_words(limit, source) -> str:
    """The what-if's eager limit and where it comes from."""
    return source if limit is None else f"{limit:.0f} B ({source}); larger messages by rendezvous"


def format_whatif(w: WhatIf) -> str:
    v = w.validation
    out = [
        f"what if: profile run {w.run_id} ({w.traced_p} ranks traced) at more ranks, its per-rank pattern "
        f"replicated; tune {w.tune} ({w.library}); costs: {w.costs}; {w.replicates} replicate(s), seed {w.seed}",
        "time in communication per rank (mean over ranks), ms"
        + (
            "; interval: 95% of the replicates"
            if w.replicates > 1
            else "; one replicate: no interval (draw message times with --sample and give --replicates N)"
        ),
        f"validation at {w.traced_p} ranks: traced {sig(w.traced_comm_s * 1e3)} ms, simulated "
        f"{sig(v.default.median_s * 1e3)} ms (error {100 * w.error:+.1f}%)",
        f"eager limit: {eager_words(w.eager_limit, w.eager_from)}",
    ]
    rows = [
        [
            str(x.p) + (" (traced)" if x is v else ""),
            _ms(x.default),
            _ms(x.tuned),
            f"{x.speedup.median:.3f} [{x.speedup.low:.3f}, {x.speedup.high:.3f}]",
            f"{100 * x.kept_share:.1f}%",
            str(x.nops),
        ]
        for x in [v, *w.points]
    ]
    out.append(
        table(
            ["ranks", "default (ms)", "tuned (ms)", "speedup", "as traced", "operations"],
            rows,
            [True, True, True, True, True, True],
        )
    )
    out.append("collectives: the library's algorithm under each selection, and ours simulated for it")
    out.append(
        table(
            ["collective", "comm size", "size (B)", "default", "tuned", "ours (default)", "ours (tuned)", "note"],
            _selection_rows(w.selections),
            [False, True, True, False, False, False, False, False],
        )
    )
    if w.kept:
        out.append(
            "calls with no algorithm of ours (their traced time stands): "
            + ", ".join(f"{k['call']} {100 * k['share']:.1f}%" for k in w.kept)
            + " of the traced time in communication"
        )
    return "\n".join(out) + "\n"
