"""Text and JSON of `mpiscope sim run|predict|check`: microseconds in the
text, seconds in the JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mpiscope.common.sizes import format_size
from mpiscope.views.documents import json_document
from mpiscope.views.text import sig, table, us

if TYPE_CHECKING:  # types only: `sim run` need not load the check's statistics
    from mpiscope.sim.check import SimCheck
    from mpiscope.sim.costs import SimCosts
    from mpiscope.sim.predict import Ranked
    from mpiscope.sim.simulate import SimAnswer


# ----------------------------------------------------------------------- run

def run_document(schedule, costs: SimCosts, ans: SimAnswer, doc: dict) -> dict:
    """`sim run`'s JSON fields, from the simulator's answer `doc` on `schedule`."""
    return {"schedule": str(schedule), "costs": costs.to_dict(), **ans.to_dict(), "nranks": doc["nranks"],
            "nops": doc["nops"], "messages": doc["replicates"][0]["messages"],
            "unexpected": doc["replicates"][0]["unexpected"],
            "rendezvous": doc["replicates"][0]["rendezvous"], "makespans_s": ans.replicates,
            "simulate_s": doc["simulate_s"], "peak_rss_bytes": doc["peak_rss_bytes"],
            "critical_path": doc.get("critical_path", [])}


def run_json(out: dict) -> str:
    return json_document("sim-run", out)


def format_run(out: dict, chart=None) -> str:
    """`sim run`'s text from its JSON fields (run_document); `chart`: the time chart written."""
    replicates = out["makespans_s"]
    lines = [f"{out['schedule']}: {out['nranks']} ranks, {out['nops']} operations, {out['messages']} messages "
             f"({out['unexpected']} unexpected, {out['rendezvous']} by rendezvous); costs: {out['costs']['source']}",
             f"finish time: median {us(out['median_s'])} µs over {len(replicates)} replicate(s)"
             + (f", 95% prediction interval [{us(out['low_s'])}, {us(out['high_s'])}] µs"
                if len(replicates) > 1 else ""),
             f"simulated {out['events']} events in {out['simulate_s']:.3g} s "
             f"({out['events_per_s'] / 1e6:.3g} M events/s)"]
    if out["critical_path"]:
        lines.append("critical path, last operation first:")
        rows = [[str(c["rank"]), str(c["index"]), c["op"], "" if c["peer"] < 0 else str(c["peer"]),
                 sig(c["value"]), us(c["start_s"]), us(c["end_s"])] for c in out["critical_path"]]
        lines.append(table(["rank", "op#", "op", "peer", "bytes", "start (us)", "end (us)"], rows,
                           [True, True, False, True, True, True, True]))
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
        out.append(f"size {format_size(x.size)} ({x.size} B), {x.replicates} replicate(s); "
                   "interval: 95% of the replicates")
        out.append(table(["rank", "algorithm", "median (us)", "low (us)", "high (us)", "x best", "regime"],
                         [[str(i), r.algo, us(r.answer.median), us(r.answer.low), us(r.answer.high),
                           f"{r.answer.median / best:.2f}" if best > 0 else "-", r.answer.regime]
                          for i, r in enumerate(x.ranked, 1)],
                         [True, False, True, True, True, True, False]))
    if x.span is not None:
        lo, hi = x.span
        out.append(f"best algorithm from {format_size(lo)} B to {format_size(hi)} B (simulated):")
        out.append(table(["from size (B)", "best", ""], [[str(lo), x.best_at_start, ""]] +
                         [[str(s), b, f"(was {a})"] for s, a, b in x.crossovers], [True, False, False]))
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------- check

def check_json(res: SimCheck) -> str:
    return json_document("sim-check", res.to_dict())


def format_check(res: SimCheck) -> str:
    out = [f"run {res.run_id}: {res.p} ranks; costs: {res.costs.source}"
           + ("; message times drawn from its distributions" if res.sampled else "")]
    rows = [[r.bench, r.algo, str(r.size), str(r.n), us(r.measured), us(r.simulated),
             f"[{us(r.low)}, {us(r.high)}]", "-" if r.error is None else f"{100 * r.error:+.1f}%"]
            for r in res.rows]
    out.append(table(["bench", "algorithm", "size(B)", "n", "measured (us)", "simulated (us)", "interval",
                      "error"], rows, [False, False, True, True, True, True, False, True]))
    out.append(f"simulated within 15% of measured: {100 * res.within(0.15):.0f}% of cells")
    rk = res.rankings()
    if rk:
        out.append("rankings (Kendall τ between measured and simulated order):")
        out.append(table(["bench", "size(B)", "algorithms", "τ", "best measured", "best simulated"],
                         [[r["bench"], str(r["size"]), str(r["algos"]),
                           "-" if r["kendall_tau"] is None else f"{r['kendall_tau']:.2f}",
                           r["best_measured"], r["best_simulated"]] for r in rk],
                         [False, True, True, True, False, False]))
    return "\n".join(out) + "\n"
