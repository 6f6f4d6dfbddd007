# SPDX-License-Identifier: BSD-3-Clause
"""Text and JSON of `mpiscope model predict|check`: microseconds in the text,
seconds (and seconds per byte) in the JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mpiscope.common.sizes import format_size
from mpiscope.common.documents import json_document
from mpiscope.views.text import sig, table, us

if TYPE_CHECKING:  # types only: `model predict` need not load the check's run reading
    from mpiscope.models.costmodels.check import CheckResult
    from mpiscope.models.costmodels.params import ModelParams
    from mpiscope.models.costmodels.predict import Crossover, Prediction


def _pct(x, signed=True):
    return "-" if x is None else f"{100 * x:+.1f}%" if signed else f"{100 * x:.1f}%"


def params_line(p: ModelParams) -> str:
    parts = []
    if p.alpha is not None:
        parts.append(f"α = {sig(p.alpha * 1e6)} µs, β = {sig(p.beta * 1e9)} ns/B")
    if p.has_sr:
        parts.append(
            f"αs = {sig(p.alpha_s * 1e6)} µs, βs = {sig(p.beta_s * 1e9)} ns/B, "
            f"αr = {sig(p.alpha_r * 1e6)} µs, βr = {sig(p.beta_r * 1e9)} ns/B"
        )
    parts.append(f"γ = {sig(p.gamma * 1e9)} ns/B")
    return "; ".join(parts)


# ------------------------------------------------------------------- predict


@dataclass
class ModelPrediction:
    """What `model predict` found for one collective on p ranks: the
    algorithms ranked at one size by `rank_by` ("hockney" or "sr"), and/or
    the best one from `span`'s first size on and the sizes where it changes."""

    bench: str
    p: int
    params: ModelParams
    rank_by: str
    size: int | None = None
    ranked: list[Prediction] = field(default_factory=list)
    span: tuple[int, int] | None = None
    best_at_start: str | None = None
    crossovers: list[Crossover] = field(default_factory=list)

    @property
    def model_name(self) -> str:
        return "sender/receiver" if self.rank_by == "sr" else "Hockney"


def predict_json(x: ModelPrediction) -> str:
    doc = {"bench": x.bench, "p": x.p, "params": x.params.to_dict(), "rank_by": x.rank_by}
    if x.size is not None:
        doc["size"] = x.size
        doc["predictions"] = [
            {
                "algo": r.name,
                "hockney_s": r.hockney,
                "sender_receiver_s": r.sender_receiver,
                "hockney_formula": r.hockney_formula,
                "sender_receiver_formula": r.sr_formula,
            }
            for r in x.ranked
        ]
    if x.span is not None:
        doc["crossovers"] = [{"size": c.size, "from": c.before, "to": c.to} for c in x.crossovers]
        doc["best_at_start"] = x.best_at_start
    return json_document("model-predict", doc)


def format_predict(x: ModelPrediction) -> str:
    out = [f"{x.bench} on {x.p} ranks; {params_line(x.params)}"]
    if x.size is not None:
        sr = x.params.has_sr
        best = x.ranked[0].key(x.rank_by) if x.ranked else None
        header = (
            ["rank", "algorithm", "Hockney (us)"]
            + (["send/recv (us)"] if sr else [])
            + ["x best", "Hockney formula (p = 2^k)"]
        )
        lines = []
        for i, r in enumerate(x.ranked, 1):
            ratio = r.key(x.rank_by) / best if best else float("nan")
            lines.append(
                [str(i), r.name, us(r.hockney)]
                + ([us(r.sender_receiver)] if sr else [])
                + [f"{ratio:.2f}", r.hockney_formula]
            )
        right = [True, False, True] + ([True] if sr else []) + [True, False]
        out.append(f"size {format_size(x.size)} ({x.size} B); ranked by {x.model_name} model")
        out.append(table(header, lines, right))
    if x.span is not None:
        lo, hi = x.span
        out.append(f"best algorithm from {format_size(lo)} B to {format_size(hi)} B ({x.model_name} model):")
        lines = [[str(lo), x.best_at_start, ""]] + [[str(c.size), c.to, f"(was {c.before})"] for c in x.crossovers]
        out.append(table(["from size (B)", "best", ""], lines, [True, False, False]))
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------- check


def check_json(result: CheckResult) -> str:
    return json_document("model-check", result.to_dict())


def format_check(result: CheckResult) -> str:
    sr = result.params.has_sr
    out = [f"run {result.run_id}: {result.p} ranks; {params_line(result.params)} (from the {result.source})"]
    header = ["bench", "algorithm", "size(B)", "n", "measured (us)", "Hockney (us)", "error"]
    if sr:
        header += ["send/recv (us)", "error"]
    lines = []
    for r in result.rows:
        line = [r.bench, r.algo, str(r.size), str(r.n), us(r.measured), us(r.hockney), _pct(r.hockney_error)]
        if sr:
            line += [us(r.sender_receiver), _pct(r.sr_error)]
        lines.append(line)
    out.append(table(header, lines, [False, False] + [True] * (len(header) - 2)))
    out.append("")
    out.append("relative error |predicted − measured| / measured, per algorithm:")
    header = ["bench", "algorithm", "sizes", "Hockney median", "Hockney max"]
    if sr:
        header += ["send/recv median", "send/recv max"]
    lines = []
    for s in result.summary():
        line = [
            s["bench"],
            s["algo"],
            str(s["sizes"]),
            _pct(s["hockney_median_abs_error"], False),
            _pct(s["hockney_max_abs_error"], False),
        ]
        if sr:
            line += [
                _pct(s["sender_receiver_median_abs_error"], False),
                _pct(s["sender_receiver_max_abs_error"], False),
            ]
        lines.append(line)
    out.append(table(header, lines, [False, False] + [True] * (len(header) - 2)))
    return "\n".join(out) + "\n"
