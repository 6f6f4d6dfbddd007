# SPDX-License-Identifier: BSD-3-Clause
"""What a simulation charges: LogGOPS (L, o, g, G, O, the eager limit S) and
Tan and Strazdins' (2002) sender/receiver costs (αs, βs, αr, βr), in base
units, as the simulator's options. Hockney α + β·m without overlap is αs = α,
βs = β and the rest 0: a message keeps its sender's send channel busy for α +
β·m, so a rank's sends follow one another, as the classical formulas (binomial
broadcast ⌈lg p⌉(α + nβ), ...) count them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.models.costmodels.base import DEFAULT_SEGMENT
from mpiscope.models.costmodels.params import ModelParams, load_machine
from mpiscope.common.inputs import MODEL_LIMIT, read_json


@dataclass(frozen=True)
class SimCosts:
    L: float = 0.0
    o_s: float = 0.0
    o_r: float = 0.0
    O: float = 0.0
    g: float = 0.0
    G: float = 0.0
    S: float = math.inf  # bytes; larger messages go by rendezvous
    S_first: float = 0.0  # bytes a rendezvous message carries with its request
    burst: float = 0.0  # bytes a link's token bucket holds (with G); 0: none
    alpha_s: float = 0.0
    beta_s: float = 0.0
    alpha_r: float = 0.0
    beta_r: float = 0.0
    gamma: float = 0.0
    segment: int = DEFAULT_SEGMENT
    source: str = "options"

    def argv(self) -> list[str]:
        out = []
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in ("segment", "source") or (f.name == "S" and math.isinf(v)):
                continue
            out += [f"--{f.name.replace('_', '-')}", repr(float(v))]
        return out + ["--segment", str(int(self.segment))]

    def to_dict(self) -> dict:
        return {
            f.name: (
                None
                if isinstance(getattr(self, f.name), float) and math.isinf(getattr(self, f.name))
                else getattr(self, f.name)
            )
            for f in fields(self)
        }


def from_model_params(p: ModelParams, source: str) -> SimCosts:
    """Hockney (α, β) or sender/receiver (αs, βs, αr, βr) costs."""
    if p.has_sr:
        return SimCosts(
            alpha_s=p.alpha_s,
            beta_s=p.beta_s,
            alpha_r=p.alpha_r,
            beta_r=p.beta_r,
            gamma=p.gamma,
            segment=p.segment,
            source=source + " (sender/receiver)",
        )
    if p.alpha is None or p.beta is None:
        raise UsageError(f"{source}: needs alpha and beta, or alpha_s, beta_s, alpha_r and beta_r")
    return SimCosts(alpha_s=p.alpha, beta_s=p.beta, gamma=p.gamma, segment=p.segment, source=source + " (Hockney)")


def from_loggp_model(model, source: str) -> SimCosts:
    """LogGP from `mpiscope loggp --save`: o_s, o_r, g, G as measured; L as
    measured, or, where the overheads overlap and L is undefined, what is
    left of EEL at its size after o_s, o_r and G·m (0 at least)."""
    o_s, o_r, g, G, L = (model.param(k) for k in ("o_s", "o_r", "g", "G", "L"))
    eel = model.param("EEL")
    if not all(math.isfinite(x) for x in (o_s, o_r, G)) or not math.isfinite(eel):
        raise UsageError(f"{source}: the LogGP model lacks EEL, o_s, o_r or G")
    if not math.isfinite(L):
        L = max(0.0, eel - o_s - o_r - G * (model.base_size or 0))
    return SimCosts(L=L, o_s=o_s, o_r=o_r, g=g if math.isfinite(g) else 0.0, G=G, source=source + " (LogGP)")


def load_costs(path) -> SimCosts:
    """A machine model file: a LogGP model (loggp --save) or the cost models' JSON."""
    path = Path(path)
    try:
        fmt = read_json(path, MODEL_LIMIT, "--machine").get("format") if path.exists() else None
    except AttributeError:
        fmt = None
    if fmt == "mpiscope-machine-model":
        from mpiscope.models.machine_model import load

        return from_loggp_model(load(path), str(path))
    return from_model_params(load_machine(path), str(path))


def override(c: SimCosts, **values) -> SimCosts:
    """c with the values that are not None."""
    return replace(c, **{k: v for k, v in values.items() if v is not None})
